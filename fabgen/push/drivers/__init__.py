"""What every push driver is (base.py) and the SSH shell session the Linux-based switch OSes
share (linux.py). The drivers themselves are their platforms' (fabgen/platforms/<os>/push/
driver.py), listed by registry/push.py.

Each driver states its true `mode` (replace or merge), where its diff comes from (`device`:
the switch computed it; `local`: fabgen compared the fetched running config with the render)
and who runs the commit-confirm timer (`device`, or `fabgen` where the platform has none).
Every step returns a `Step` or raises `DeviceError`; nothing is reported as done that was not
checked on the device: napalm over SSH never raises on `% Invalid input`, and netmiko returns
text without an exit status, so each driver checks for itself (see reference/push-testing.md).

What is replaced is never the render alone: each driver builds its candidate from the device's
running config with the parts fabgen owns replaced by the render (its platform's candidate
module, with the shared pieces in push/candidate.py), and refuses a candidate that would remove
or change the management access the session depends on.
"""
