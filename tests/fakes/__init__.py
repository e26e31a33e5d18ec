"""Fake switches for push tests: real SSH servers on 127.0.0.1, state kept in files.

- `fake_eos`: a paramiko server with a stateful EOS-like shell (configuration sessions,
  `| json`, commit timers that really revert) that napalm's `eos` driver drives over SSH.
- `fake_linux`: asyncssh servers for SONiC and Cumulus NVUE: a shell that runs each line with a
  real bash, SFTP chrooted to the switch's home, and small fake `config`/`show`/`nv` commands
  (`fake_cli.py`) that keep their state in files under that home.

Every server listens on 127.0.0.1 with an ephemeral port and is stopped by its fixture.
"""
