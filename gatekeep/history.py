"""Reading command lines out of shell history files, for `gatekeep scan`.

One reader serves every format, line by line:
  * bash with HISTTIMEFORMAT: `#1700000000` lines are timestamps, skipped;
  * zsh EXTENDED_HISTORY: `: 1700000000:0;git status` loses its prefix, and a
    command whose line ends with a backslash continues on the next line (zsh
    writes multi-line commands that way);
  * anything else is one command per line.
With NUL-separated input (`--null`) every record is one command, as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_BASH_TIMESTAMP = re.compile(r"#\d+")
_ZSH_EXTENDED = re.compile(r": \d+:\d+;")


def command_lines(lines: Iterable[str]) -> Iterator[str]:
    pending: list[str] | None = None
    for raw in lines:
        line = raw.rstrip("\n")
        if pending is None:
            if _BASH_TIMESTAMP.fullmatch(line) or not line.strip():
                continue
            prefix = _ZSH_EXTENDED.match(line)
            if prefix is None:
                yield line
                continue
            pending = []
            line = line[prefix.end() :]
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        yield "\n".join(pending)
        pending = None
    if pending:
        yield "\n".join(pending)


def null_separated(text: str) -> Iterator[str]:
    return (record for record in text.split("\0") if record.strip())
