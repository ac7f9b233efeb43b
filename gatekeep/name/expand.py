"""What a word's tilde and parameter expansions evaluate to, where gatekeep can know it.

bash and zsh spell a path in many ways. Where the value is known when the line is
checked, it is written out; where it is not, the part stands as ANY, a part
that may be anything (several directories, `..`, any name):

- `~` and `~/x`: the home directory; `~user`: that user's home (zsh also takes
  `~NAME` for a named directory or a parameter holding a path, which is ANY
  when NAME is no user); `~+`: the directory the command runs in (ANY when
  that is known only at run time); `~-`, `~N`, `~+N`, `~-N`: ANY (the previous
  directory and the directory stack are the shell's, not the checker's);
- `$HOME`, `$PWD` (the command's directory) and the exported variables of the
  checker's environment (the shell's, for a typed line); a loop's variable
  over words judged already is KNOWN;
- `${NAME}`, and `${NAME:-word}`, `${NAME-word}`, `${NAME:=word}`, `${NAME:+word}`,
  `${NAME%pat}`, `${NAME%%pat}`, `${NAME#pat}`, `${NAME##pat}` with a literal
  word or pattern (`*` and `?` allowed in a pattern), evaluated as bash does;
- anything else (`$(pwd)`, backquotes, `$1`, `${!x}`, `${x/a/b}`, a variable
  that is not exported): ANY.

A path whose start is ANY (`${HOME%/x}/.ssh/id_rsa`, `~-/.env`, `$(pwd)/../.env`)
may be any path ending in what follows: protect.py and writes.py judge it so.
"""

from __future__ import annotations

import os

ANY = "\x00"  # a part known only at run time
KNOWN = "\x01"  # a word judged already (a loop's variable): matches no pattern
_OPERATORS = (":-", ":=", ":+", ":?", "%%", "##", "-", "=", "+", "?", "%", "#")


def expand(
    word: str, home: str, directory: str | None, known: frozenset[str] = frozenset(), env=None
) -> str:
    """`word` with its tilde prefix and parameter expansions written out where their values are
    known, ANY where not (module docstring). `directory`: where the command runs, None when
    that is known only at run time."""
    env = os.environ if env is None else env
    out: list[str] = []
    i = 0
    if word.startswith("~"):
        end = word.find("/")
        end = len(word) if end < 0 else end
        out.append(tilde(word[1:end], home, directory))
        i = end
    while i < len(word):
        c = word[i]
        if c == "`":
            end = word.find("`", i + 1)
            out.append(ANY)
            i = len(word) if end < 0 else end + 1
        elif c == "$" and i + 1 < len(word):
            value, i = _parameter(word, i, home, directory, known, env)
            out.append(value)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tilde(name: str, home: str, directory: str | None) -> str:
    """What `~NAME` (NAME the text up to the first `/`) stands for."""
    if name == "":
        return home
    if name == "+":
        return directory if directory else ANY
    if name[:1] in "+-" or name.isdigit():  # ~-, ~N, ~+N, ~-N: OLDPWD and the directory stack
        return ANY
    try:
        import pwd

        return pwd.getpwnam(name).pw_dir.rstrip("/") or "/"
    except (KeyError, ImportError, ValueError):
        return ANY  # zsh: a named directory or a parameter holding a path


def _value(name: str, home: str, directory: str | None, known: frozenset[str], env) -> str | None:
    """A variable's value, KNOWN for a loop's variable, None when it is not known here."""
    if name in known:
        return KNOWN
    if name == "HOME":
        return home
    if name == "PWD":
        return directory or None
    return env.get(name)


def _parameter(word: str, at: int, home: str, directory: str | None, known, env) -> tuple[str, int]:
    """(what the expansion at `at` gives, where it ends)."""
    nxt = word[at + 1]
    if nxt == "(":
        return ANY, _closing(word, at + 1, "(", ")")
    if nxt == "{":
        end = _closing(word, at + 1, "{", "}")
        inner = word[at + 2 : end - 1] if end <= len(word) and word[end - 1 : end] == "}" else None
        return (_braced(inner, home, directory, known, env) if inner is not None else ANY), end
    i = at + 1
    while i < len(word) and (word[i].isalnum() or word[i] == "_"):
        i += 1
    if i == at + 1:
        return ANY, at + 2  # `$1`, `$@`, `$$`, `$!`
    value = _value(word[at + 1 : i], home, directory, known, env)
    return (ANY if value is None else value), i


def _closing(word: str, at: int, opening: str, closing: str) -> int:
    """The index after the `closing` that matches the `opening` at `at` (the word's end if none)."""
    depth = 0
    for i in range(at, len(word)):
        depth += 1 if word[i] == opening else -1 if word[i] == closing else 0
        if depth == 0:
            return i + 1
    return len(word)


def _braced(inner: str, home: str, directory: str | None, known, env) -> str:
    name_end = 0
    while name_end < len(inner) and (inner[name_end].isalnum() or inner[name_end] == "_"):
        name_end += 1
    name, rest = inner[:name_end], inner[name_end:]
    if not name or name[0].isdigit():
        return ANY  # `${1}`, `${!x}`, `${#x}`, `${@}`
    value = _value(name, home, directory, known, env)
    if not rest:
        return ANY if value is None else value
    operator = next((op for op in _OPERATORS if rest.startswith(op)), None)
    argument = rest[len(operator) :] if operator else None
    if operator is None or any(c in argument for c in "$`\\'\"{}[]"):
        return ANY  # `${x/a/b}`, `${x:1:2}`, an argument with expansions or quotes of its own
    if value is None or value is KNOWN:
        return ANY if value is None else KNOWN  # not exported: a shell variable may still hold anything
    if operator in (":-", "-", ":=", "="):
        return argument if operator[0] == ":" and value == "" else value
    if operator in (":+", "+"):
        return argument if (value or operator == "+") else ""
    if operator in (":?", "?"):
        return value
    return _trimmed(value, operator, argument)


def _trimmed(value: str, operator: str, pattern: str) -> str:
    """`${x%pat}` and its kind: the shortest or longest match of the glob `pat` removed from the
    end (`%`) or the start (`#`) of the value."""
    from fnmatch import fnmatchcase

    n = len(value)
    if operator in ("%", "%%"):
        starts = range(n, -1, -1) if operator == "%" else range(n + 1)
        for start in starts:
            if fnmatchcase(value[start:], pattern):
                return value[:start]
        return value
    ends = range(n + 1) if operator == "#" else range(n, -1, -1)
    for end in ends:
        if fnmatchcase(value[:end], pattern):
            return value[end:]
    return value
