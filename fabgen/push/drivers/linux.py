"""Switch OSes that are a Linux shell share a netmiko session to it: commands with their exit
status, uploads over SFTP checked by sha256."""

from __future__ import annotations

import hashlib
import io
import re
import shlex
from typing import Any, ClassVar

from fabgen.push.drivers.base import Driver, tail
from fabgen.push.results import DeviceError, ErrorKind

_RC = re.compile(r"__rc=(\d+)\s*$")


class LinuxDriver(Driver):
    """A netmiko session to a Linux shell: commands with exit status, uploads over SFTP."""

    connection = "netmiko"
    filename: ClassVar[str]

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, host: str | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        # Relative to the login directory: several devices on one host never share a file.
        self.remote = f"fabgen-{run_id}-{self.filename}"
        self.uploads: set[str] = set()

    @property
    def uploaded(self) -> bool:
        return bool(self.uploads)

    def sh(self, command: str, kind: ErrorKind | None = "error",
           timeout: float | None = None) -> tuple[int, str]:
        """Run a command; its exit status comes from `echo __rc=$?` (netmiko has none).

        With `kind`, a non-zero status raises DeviceError of that kind with the output's tail.
        """
        out = str(self.conn.send_command(f"{command}; echo __rc=$?",
                                         read_timeout=timeout or self.timeout))
        m = _RC.search(out)
        if m is None:
            raise DeviceError("error", f"`{command}`: no exit status in the output: {tail(out)}")
        rc, text = int(m.group(1)), out[: m.start()].rstrip()
        if rc and kind is not None:
            raise DeviceError(kind, f"`{command}` failed (exit {rc}): {tail(text)}")
        return rc, text

    def upload(self, files: dict[str, str]) -> None:
        """Put each text at its remote path (SFTP), then check every file's sha256 at once."""
        import paramiko  # here, so `fabgen.push` imports without the push extra installed

        data = {remote: text.encode("utf-8") for remote, text in files.items()}
        sftp = paramiko.SFTPClient.from_transport(self.conn.remote_conn.get_transport())
        if sftp is None:
            raise DeviceError("error", "the device refused an SFTP session")
        try:
            for remote, content in data.items():
                sftp.putfo(io.BytesIO(content), remote)
                self.uploads.add(remote)
        finally:
            sftp.close()
        _, out = self.sh("sha256sum " + " ".join(shlex.quote(r) for r in data))
        for remote, content in data.items():
            if hashlib.sha256(content).hexdigest() not in out:
                raise DeviceError("error", f"the uploaded {remote} does not match the candidate")

    def cleanup(self, also: str = "") -> None:
        """Remove the uploads (and `also`, more shell words for `rm -f`)."""
        if self.uploads or also:
            self.sh("rm -f " + " ".join([*(shlex.quote(r) for r in sorted(self.uploads)),
                                         also]).rstrip(), kind=None)
            self.uploads.clear()
