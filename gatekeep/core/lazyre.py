"""Regular expressions compiled on first use.

`re.compile` runs the pure-Python regex compiler: gatekeep's two dozen module
level patterns cost about 0.4x Python's start-up to compile at import, on every
`gatekeep check`, though a typical line needs only a few of them, or none; the
`re` module itself is imported only when one is first needed.
"""

from __future__ import annotations


class LazyPattern:
    """Stands for `re.compile(pattern, flags)` and compiles it when a method is first used."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        # only called for attributes not set yet: compile, then keep the bound method on the instance
        import re  # here, not at the top: with enum and functools it costs ~0.8x Python's start-up

        value = getattr(re.compile(*self._source), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
