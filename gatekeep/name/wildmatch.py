"""Could a policy pattern match a command whose words are partly unknown?

`rm -rf $DIR` is `rm -rf /` when DIR is `/`. When a deny or ask rule does not
match a command as written, but would match for some value of its variables,
globs or substitutions, gatekeep must not let the command through as if the
rule did not exist. This module answers the question with a two-sided
wildcard match: the pattern's `*` may stand for any run of characters, and
each unknown part of the command (marked UNKNOWN) for any run within one word.
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy

UNKNOWN = "\x00"
_STAR = "\x01"
_EXPANSION = lazy(
    r"\$\{[^}]*\}|\$\([^)]*\)?|\$[A-Za-z_][A-Za-z_0-9]*|\$[0-9@*#?$!-]|`[^`]*`?|[<>]\([^)]*\)?|\[[^\]]*\]|[*?]|\{[^}]*\}"
)
MAX_TEXT = 2000  # longer commands are not tried: the check costs pattern length x text length
MAX_CELLS = 1_000_000  # nor longer patterns times texts: ~0.1 s of the walk below; a project file is hostile input


def unknown_parts(value: str) -> str:
    """A dynamic word's value with each expansion, glob or brace list replaced by UNKNOWN."""
    return _EXPANSION.sub(UNKNOWN, value)


def could_match(pattern: str, text: str) -> bool:
    """Whether some value of the UNKNOWN parts of `text` makes the pattern match it."""
    if len(text) > MAX_TEXT:
        return True  # too long to check: assume the worst
    atoms = pattern.replace("\\*", "\x02").replace("*", _STAR).replace("\x02", "*")
    while _STAR * 2 in atoms:  # stars in a row are one star: a hostile `**…*X` costs what `*X` does
        atoms = atoms.replace(_STAR * 2, _STAR)
    alternatives = [atoms]
    if atoms.endswith(" " + _STAR):
        alternatives.append(atoms[:-2])  # `git push *` also matches `git push`
    for p in alternatives:
        if _ends_differ(p, text):
            continue
        if len(p) * (len(text) + 1) > MAX_CELLS or _match(p, text):
            return True  # (too long a walk to take: assume the worst)
    return False


def _ends_differ(p: str, t: str) -> bool:
    """Whether the literal starts (before any `*` or unknown part) or literal ends of the two
    differ, which rules a match out without the quadratic walk below: most rules tried against
    a command fail this way. Reversing both keeps the question the same."""
    for a, b in ((p, t), (p[::-1], t[::-1])):
        for x, y in zip(a, b, strict=False):  # they differ in length
            if x == _STAR or y == UNKNOWN:
                break
            if x != y:
                return True
    return False


def _match(p: str, t: str) -> bool:
    n, m = len(p), len(t)
    # reach[j]: pattern[:i] can match text[:j]
    reach = [True] + [False] * m
    for j in range(1, m + 1):
        reach[j] = reach[j - 1] and t[j - 1] == UNKNOWN
    for i in range(1, n + 1):
        pc = p[i - 1]
        new = [False] * (m + 1)
        new[0] = reach[0] and pc == _STAR
        for j in range(1, m + 1):
            tc = t[j - 1]
            if pc == _STAR:
                new[j] = reach[j] or new[j - 1]
            elif tc == UNKNOWN:
                # empty, or standing for pattern characters: never a space, since an unknown
                # part is taken to stay inside its word (a quoted "$DIR"), not to split it
                new[j] = new[j - 1] or (pc != " " and (reach[j] or reach[j - 1]))
            else:
                new[j] = reach[j - 1] and pc == tc
        if not any(new):
            return False  # no start of the text is matched by this much of the pattern
        reach = new
    return reach[m]
