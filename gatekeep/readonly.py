"""The built-in read-only set: commands allowed without a rule.

A command is read-only when its word is listed here (as written, not through
a path), none of its options makes it write something, and no redirection
writes a file. Options that make it run code (`sort --compress-program`,
`rg --pre`, `git -c core.pager=…`) are not listed here: they are in the one
table of such forms, tools/*.toml, which decide.py consults before this set. GNU long options may be abbreviated, so any prefix
of a forbidden long option counts (`--out` is `--output`); a short option
counts wherever it stands in a cluster (`-no` holds `-o`).
"""

from __future__ import annotations

from gatekeep.normalize import Normalized
from gatekeep.records import record
from gatekeep.writes import HARMLESS


class ReadOnly(record("ReadOnly", "short long words max_args subcommands", defaults=("", (), (), None, None))):
    """A command that only reads, unless given one of its writing options.

    short / long: options that write or execute; words: whole arguments that
    write or execute (find -exec); max_args: more non-option arguments than this
    write (hostname NAME); subcommands: for git, which subcommands are read-only.
    """

    __slots__ = ()


def _r(short: str = "", long: str = "", words: str = "", **kw) -> ReadOnly:
    return ReadOnly(short, tuple(long.split()), tuple(words.split()), **kw)


PLAIN = _r()
READ_ONLY: dict[str, ReadOnly] = {
    **dict.fromkeys(
        "ls pwd cat head tail wc grep egrep fgrep which whoami id echo true false basename "
        "dirname realpath readlink stat du df uname cmp cut tr nl column printenv type diff jq "
        "md5sum sha1sum sha256sum sha512sum groups tty locale uptime nproc :".split(),
        PLAIN,
    ),
    "date": _r("s", "--set"),
    "printf": _r("v"),  # -v assigns a variable, and an array subscript there runs $( )
    "file": _r("C", "--compile"),
    "tree": _r("o", "--output"),
    "sort": _r("o", "--output"),
    "rg": PLAIN,
    "hostname": _r("bF", "--boot --file", max_args=0),
    "find": _r("", "", "-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls"),
    "git": _r(
        "C",  # another repository, whose config can run code
        "--output --git-dir --work-tree",
        subcommands=frozenset("status log diff show rev-parse ls-files blame shortlog describe".split()),
    ),
}


def is_read_only(normalized: Normalized) -> bool:
    form = normalized.allow_form
    if not form or form[0] not in READ_ONLY:
        return False
    if any(r.writes_file and r.target not in HARMLESS for r in normalized.command.redirects):
        return False
    spec = READ_ONLY[form[0]]
    if spec.subcommands is not None:  # skip the values of global options: `git -c color.ui=never log`
        from gatekeep.arity import load_table

        positional = [form[i] for i in load_table().positional(list(form))[1:]]
    else:
        positional = [arg for arg in form[1:] if not arg.startswith("-") or arg == "-"]
    if spec.subcommands is not None and (not positional or positional[0] not in spec.subcommands):
        return False
    if spec.max_args is not None and len(positional) > spec.max_args:
        return False
    return not any(_forbidden(arg, spec) for arg in form[1:])


def _forbidden(arg: str, spec: ReadOnly) -> bool:
    if arg in spec.words:
        return True
    if arg.startswith("--"):
        name = arg.split("=", 1)[0]
        return len(name) >= 3 and any(option.startswith(name) for option in spec.long)
    if arg.startswith("-") and len(arg) > 1:
        return any(c in spec.short for c in arg[1:])
    return False
