"""How NCCL reads a conf file (/etc/nccl.conf, ~/.nccl.conf, $NCCL_CONF_FILE), per version: a
test model of `setEnvFile` in NVIDIA/nccl.

Read at the tags of NVIDIA/nccl (mirror HEAD 5067397c, v2.30.7):

* up to v2.12.7: `static void setEnvFile` in src/include/param.h, which ends the name with
  `envVar[s] = '\\0'` (past the buffer for a name over 1023 bytes: `load` refuses such a line
  for those releases); from v2.12.10: `void setEnvFile` in src/misc/param.cc. Same body until
  v2.26.2: each line from getline(), its trailing '\\n' cut; a line without '=' is skipped;
  otherwise the name is everything before the first '=' (at most 1023 bytes), the value
  everything after it (at most 1023 bytes), and `setenv(name, value, 0)` sets it unless the
  variable exists already. **No comment handling**:
  `# a=b` sets a variable named `# a` to `b`.
* v2.26.2-1 (f44ac759) adds `if (line[0] == '#') continue;` before the '\\n' is cut: lines
  starting with '#' are comments from then on.
* v2.29.2-1 calls `ncclOsSetEnv`, which is `setenv(name, value, 0)` on Linux (src/os/linux.cc).
* v2.30.3-1 reads with `fgets(line, 4096, file)` instead of getline(): a line of more than 4095
  bytes is read in 4095-byte pieces, each parsed as a line of its own; it also cuts a trailing
  '\\r' after the '\\n'.

setenv() refuses (EINVAL) an empty name; a name cannot hold '=' here (it ends at the first).
Files are read NCCL_CONF_FILE (else ~/.nccl.conf), then /etc/nccl.conf; the first value set wins.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["COMMENTS_FROM", "FGETS_FROM", "NAME_CAPPED_FROM", "VERSIONS", "load", "version_of"]

Version = tuple[int, int, int]

NAME_CAPPED_FROM: Version = (2, 12, 10)  # envVar[min(1023, s)]; before, envVar[s]: overflow
COMMENTS_FROM: Version = (2, 26, 2)  # '#' lines skipped (f44ac759)
FGETS_FROM: Version = (2, 30, 3)  # fgets(4096) and '\r' cut
_NAME_MAX = _VALUE_MAX = 1023
_FGETS_LINE = 4096 - 1
# One release of each behaviour, and the last before a change: what the tests read a file as.
VERSIONS: tuple[Version, ...] = ((2, 18, 3), (2, 26, 1), (2, 26, 2), (2, 29, 7), (2, 30, 7))


def version_of(text: str) -> Version:
    """"2.26.2" (or "v2.26.2-1") as a tuple."""
    core = text.lstrip("v").split("-")[0]
    major, minor, patch = (int(x) for x in core.split("."))
    return major, minor, patch


def _lines(data: bytes, version: Version) -> list[bytes]:
    """The lines setEnvFile's reader hands over, each with its '\\n' when it had one."""
    out: list[bytes] = []
    for line in data.splitlines(keepends=True):
        if version >= FGETS_FROM:
            while len(line) > _FGETS_LINE:
                out.append(line[:_FGETS_LINE])
                line = line[_FGETS_LINE:]
        out.append(line)
    return out


def load(data: bytes | str, version: Version,
         environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables NCCL `version` sets from one conf file, given the environment before
    (those it leaves alone are not returned)."""
    raw = data.encode() if isinstance(data, str) else data
    env = dict(environ or {})
    out: dict[str, str] = {}
    for line in _lines(raw, version):
        if version >= COMMENTS_FROM and line.startswith(b"#"):
            continue
        if line.endswith(b"\n"):
            line = line[:-1]
        if version >= FGETS_FROM and line.endswith(b"\r"):
            line = line[:-1]
        line = line.split(b"\0", 1)[0]  # C strings end at the first NUL
        s = line.find(b"=")
        if s < 0:
            continue
        if s > _NAME_MAX and version < NAME_CAPPED_FROM:
            raise ValueError(f"a {s}-byte name overflows envVar[1024] before 2.12.10: "
                             "undefined behaviour, no model")
        name = line[:min(_NAME_MAX, s)].decode(errors="surrogateescape")
        value = line[s + 1:][:_VALUE_MAX].decode(errors="surrogateescape")
        if not name or name in env:  # setenv(.., 0): EINVAL, or the variable exists
            continue
        env[name] = value
        out[name] = value
    return out
