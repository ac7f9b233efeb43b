"""JSON in and out of a gate process without importing the json package.

The json package imports re, and with it enum and functools: ~8 ms, more than half
of what claude-hook spends deciding a command (issue 18), and ~1x Python's start-up
on every audit record. Its two C halves do the work without it:

- dumps: dicts, lists and tuples of strings, whole numbers, booleans and None are
  written with json's own C string encoder, as `json.dumps(value, ensure_ascii=False)`
  writes them (same separators); anything else (a float, a key that is not a string)
  goes to json.
- loads: JSON text is read by json's C scanner, made with the settings `json.loads`
  uses; anything it does not read whole (bad JSON, bytes that are not UTF-8, a byte
  order mark) goes to `json.loads`, which gives the value or the error it gives.

tests/test_jsontext.py compares both with json on generated values and texts.
"""

from __future__ import annotations

try:
    from _json import encode_basestring as _quote  # what json.dumps(ensure_ascii=False) uses
    from _json import make_scanner as _make_scanner
except ImportError:  # another Python implementation: json itself
    _quote = _make_scanner = None

_WHITESPACE = " \t\n\r"  # JSON's whitespace (RFC 8259), what json.decoder.WHITESPACE matches


class _Slow(Exception):
    """A value this module does not write itself."""


def dumps(value) -> str:
    """`json.dumps(value, ensure_ascii=False)`."""
    if _quote is not None:
        try:
            return _dump(value)
        except (_Slow, RecursionError):
            pass
    import json

    return json.dumps(value, ensure_ascii=False)


def _dump(value) -> str:
    kind = type(value)
    if kind is str:
        return _quote(value)
    if value is None or kind is bool:
        return "true" if value is True else "false" if value is False else "null"
    if kind is int:
        return int.__repr__(value)
    if kind is dict:
        parts = []
        for key, item in value.items():
            if type(key) is not str:
                raise _Slow
            parts.append(f"{_quote(key)}: {_dump(item)}")
        return "{" + ", ".join(parts) + "}"
    if kind is list or kind is tuple:
        return "[" + ", ".join(_dump(item) for item in value) + "]"
    raise _Slow


class _Context:
    """The attributes json's C scanner reads from its decoder: those of `json.loads`'s default one."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


def loads(data: bytes | str):
    """`json.loads(data)`: the value, or the ValueError (json.JSONDecodeError) json raises."""
    if _make_scanner is not None:
        try:
            text = data if isinstance(data, str) else data.decode("utf-8")
            start = len(text) - len(text.lstrip(_WHITESPACE))
            value, end = _make_scanner(_Context)(text, start)
            if not text[end:].strip(_WHITESPACE):
                return value
        except (StopIteration, ValueError, RecursionError, SystemError):
            # json.loads says what is wrong, in its words. (The scanner's own error needs
            # json.decoder loaded, and without it is a SystemError.)
            pass
    import json

    return json.loads(data)
