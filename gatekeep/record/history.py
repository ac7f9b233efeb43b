"""Reading command lines out of shell history files, for `gatekeep scan`.

One reader serves every format, line by line:
  * bash with HISTTIMEFORMAT: `#1700000000` lines are timestamps, skipped;
  * zsh EXTENDED_HISTORY: `: 1700000000:0;git status` loses its prefix, and a
    command whose line ends with a backslash continues on the next line (zsh
    writes multi-line commands that way);
  * anything else is one command per line.
With NUL-separated input (`--null`) every record is one command, as it is.

Also: which history file is the user's (default_history_file), and the text
of one, as zsh writes it too (decode).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from gatekeep.core.errors import FatalError

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


# zsh writes its history "metafied": a byte in 0x83..0xa2 (or NUL) is written as META, then the
# byte XOR 0x20. Every such byte inside a UTF-8 character lengthens it by one, which is never
# valid UTF-8, so a file that is not valid UTF-8 as it is, but is once unmetafied, was metafied.
META = 0x83


def decode(data: bytes) -> str:
    """A history file's text: UTF-8, unmetafied first if zsh metafied it; bytes that are not
    UTF-8 either way become U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if META in data:
        try:
            return unmetafy(data).decode("utf-8")
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", errors="replace")


def unmetafy(data: bytes) -> bytes:
    first, *rest = data.split(bytes([META]))
    out = bytearray(first)
    for part in rest:
        if part:
            out.append(part[0] ^ 0x20)
            out += part[1:]
    return bytes(out)


def default_history_file(environ: Mapping[str, str] = os.environ) -> tuple[Path, str]:
    """The user's history file and what made it the one: $HISTFILE if it is exported and exists,
    else the usual file of the shell $SHELL names (zsh: ${ZDOTDIR:-$HOME}/.zsh_history, then
    ~/.histfile; anything else: ~/.bash_history), else the other shell's. FatalError if none exists."""
    for path, why in _history_candidates(environ):
        if path.is_file():
            return path, why
    looked = ", ".join(dict.fromkeys(str(path) for path, _ in _history_candidates(environ)))
    raise FatalError(f"no history file found (looked for {looked}); give a FILE, or - to read standard input")


def _history_candidates(environ: Mapping[str, str]) -> list[tuple[Path, str]]:
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    zdotdir = Path(environ.get("ZDOTDIR") or home)
    zsh = [(zdotdir / ".zsh_history", "the zsh history"), (home / ".histfile", "the zsh history")]
    bash = [(home / ".bash_history", "the bash history")]
    in_zsh = os.path.basename(environ.get("SHELL", "")) == "zsh"
    found = [(Path(environ["HISTFILE"]).expanduser(), "$HISTFILE")] if environ.get("HISTFILE") else []
    return found + (zsh + bash if in_zsh else bash + zsh)
