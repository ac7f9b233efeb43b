"""Showing untrusted text: control characters, ANSI escapes, bidi overrides and
zero-width characters are made visible, never interpreted by the terminal."""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\e"}


def visible(text: str) -> str:
    if text.isascii() and text.isprintable():  # the usual case, checked in C
        return text
    return "".join(_visible_char(c) for c in text)


def _visible_char(c: str) -> str:
    if " " <= c <= "~":  # printable ASCII, the usual case: no need for unicodedata
        return c
    import unicodedata

    if c.isprintable() and unicodedata.category(c) not in ("Cf", "Zl", "Zp"):
        return c
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{{{code:04x}}}"
