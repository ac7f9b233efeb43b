"""Import bashlex fast, and without the input that makes it loop forever.

bashlex builds its parser with a bundled PLY whose `yacc.yacc()` recomputes
the LALR tables on every import (≈100 ms, more than the rest of `gatekeep
check`) and never reads the parsetab it ships. gatekeep instead ships the
tables PLY computes, in `_bashlex_tables.py`, and hands them to bashlex:

  * they are used only if bashlex's grammar is exactly the one they were
    made from (SIGNATURE: start symbol, precedence, tokens and every rule's
    docstring); any other bashlex gets its own, slow, build;
  * tests/test_parse.py rebuilds them with bashlex's own yacc and compares,
    so a stale file fails the suite; `make tables` regenerates it.

bashlex loops forever, eating memory, on a `${` with no `}` after it inside a
quoted part of a word (`echo x'${'`): its
`_paramexpand` gets -1 from `str.find` and steps backwards. The wrapper below
makes that a parse error, which gatekeep reads as "could not parse". The time
limit in parse.py stays, for hangs nobody has found yet.

bashlex also compares a heredoc's lines with its delimiter word as written,
quotes and all, so `<<'EOF'` never ends and the line is unreadable; bash
ends it at the line `EOF` (the word after quote removal). The second wrapper
compares with the unquoted word, which makes the usual agent commit form
(`git commit -m "$(cat <<'EOF' ... EOF)"`) readable.

The grammar's actions that bashlex leaves unimplemented (`time`, `case`, `select`,
`coproc`) are gatekeep's (bashlex_grammar.py), installed in the parser bashlex builds.
"""

from __future__ import annotations

import os
import sys

TABLES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bashlex_tables.py")


def load():
    """bashlex, imported once per process, with gatekeep's tables and fix."""
    if "bashlex.parser" in sys.modules:
        return sys.modules["bashlex"]
    _defer_inspect()
    bashlex = _import_with_yacc(_from_shipped_tables)
    _fix_unclosed_brace_hang()
    _fix_quoted_heredoc_delimiter()
    from gatekeep.read import bashlex_grammar

    bashlex_grammar.install(bashlex.parser.yaccparser)
    return bashlex


def _defer_inspect() -> None:
    """bashlex's PLY imports inspect (with ast, dis and tokenize: ~8 ms) only to read grammar
    source when it builds its tables, which the shipped tables spare it. So until something
    uses it, `inspect` is a stand-in module that imports the real one at its first attribute.
    (The standard library's LazyLoader does not help: the import statement itself reads the
    module's __spec__, which loads it.)"""
    if "inspect" not in sys.modules:
        sys.modules["inspect"] = _Deferred("inspect")


class _Deferred(type(sys)):
    """A module imported at the first use of one of its attributes, then stood in for."""

    def __getattr__(self, name: str):
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = __import__(self.__name__)
        return getattr(real, name)


def _import_with_yacc(wrap):
    """Import bashlex with `yacc.yacc` replaced by `wrap(yacc.yacc)` while bashlex.parser calls it.

    The package's __init__ imports the parser, which builds the tables at once,
    so bashlex.yacc is loaded first under an unexecuted package module.
    """
    import importlib.util

    spec = importlib.util.find_spec("bashlex")
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package
    try:
        from bashlex import yacc

        build = yacc.yacc
        yacc.yacc = wrap(build)
        try:
            spec.loader.exec_module(package)
        finally:
            yacc.yacc = build
    except BaseException:
        for name in [m for m in sys.modules if m == "bashlex" or m.startswith("bashlex.")]:
            del sys.modules[name]
        raise
    return package


def grammar_signature(pdict: dict) -> str:
    """What the tables depend on: PLY derives them from exactly these (its ParserReflect.signature)."""
    rules = sorted((name, f.__doc__ or "") for name, f in pdict.items() if name.startswith("p_") and callable(f))
    return repr((pdict.get("start"), pdict.get("precedence"), pdict.get("tokens"), rules))


def _from_shipped_tables(build):
    def yacc_from_tables(*args, **kwargs):
        pdict = sys._getframe(1).f_globals  # bashlex.parser, whose import is calling us
        try:
            from gatekeep.read import _bashlex_tables as shipped
        except ImportError:
            shipped = None
        expected_call = not args and set(kwargs) <= {"outputdir", "debug"}
        if shipped is None or not expected_call or shipped.SIGNATURE != grammar_signature(pdict):
            # PLY reads the grammar from its caller's globals, which are no longer bashlex.parser's
            return build(*args, module=sys.modules["bashlex.parser"], **kwargs)
        from bashlex.yacc import LRParser

        return LRParser(_Tables(shipped, pdict), pdict.get("p_error"))

    return yacc_from_tables


class _Production:
    """The part of PLY's Production that its LR parser reads while parsing."""

    __slots__ = ("name", "len", "str", "callable")

    def __init__(self, name: str, length: int, text: str, callable_) -> None:
        self.name, self.len, self.str, self.callable = name, length, text, callable_


class _Tables:
    """The part of PLY's LRTable that LRParser reads."""

    def __init__(self, shipped, pdict: dict) -> None:
        self.lr_productions = [
            _Production(name, length, text, pdict[func] if func else None)
            for name, length, text, func in shipped.PRODUCTIONS
        ]
        # LRParser keeps these dicts; bashlex.parser then patches a few entries of `action`
        self.lr_action = {state: dict(row) for state, row in enumerate(shipped.ACTION)}
        self.lr_goto = {state: dict(row) for state, row in enumerate(shipped.GOTO)}


def _fix_unclosed_brace_hang() -> None:
    from bashlex import errors, subst

    expand = subst._paramexpand

    def paramexpand(parserobj, string, sindex):
        if string.startswith("${", sindex) and string.find("}", sindex + 2) == -1:
            raise errors.ParsingError("bad substitution: no closing '}'", string, sindex)
        return expand(parserobj, string, sindex)

    subst._paramexpand = paramexpand


def _fix_quoted_heredoc_delimiter() -> None:
    from bashlex import heredoc

    from gatekeep.read.shellwords import unquote

    make = heredoc.makeheredoc

    def makeheredoc(tokenizer, redirnode, lineno, killleading):
        written = redirnode.output.word
        redirnode.output.word = unquote(written).value
        try:
            return make(tokenizer, redirnode, lineno, killleading)
        finally:
            redirnode.output.word = written  # the tree keeps the word as written

    heredoc.makeheredoc = makeheredoc


def build_tables() -> str:
    """The source of `_bashlex_tables.py`, from bashlex's own (slow) build."""
    built = {}

    def capture(build):
        def yacc_and_copy(*args, **kwargs):
            # PLY reads the grammar from its caller's globals, which are no longer bashlex.parser's
            parser = build(*args, module=sys.modules["bashlex.parser"], **kwargs)
            built["pdict"] = sys._getframe(1).f_globals
            # copy now: bashlex.parser patches some entries of the live table right after this call
            built["action"] = {state: dict(row) for state, row in parser.action.items()}
            built["goto"] = {state: dict(row) for state, row in parser.goto.items()}
            built["productions"] = [(p.name, p.len, p.str, p.func) for p in parser.productions]
            return parser

        return yacc_and_copy

    saved = {m: sys.modules.pop(m) for m in list(sys.modules) if m == "bashlex" or m.startswith("bashlex.")}
    try:
        _import_with_yacc(capture)
    finally:
        for name in [m for m in sys.modules if m == "bashlex" or m.startswith("bashlex.")]:
            del sys.modules[name]
        sys.modules.update(saved)
    states = len(built["action"])
    assert sorted(built["action"]) == list(range(states)), "PLY numbers its states 0..n-1"
    action = [sorted(built["action"][s].items()) for s in range(states)]
    goto = [sorted(built["goto"].get(s, {}).items()) for s in range(states)]
    lines = [
        '"""Generated by `make tables` (gatekeep.read.bashlex_loader.build_tables): bashlex\'s LALR tables.'
        ' Do not edit."""',
        "",
        f"SIGNATURE = {grammar_signature(built['pdict'])!r}",
        "",
        "PRODUCTIONS = (",
        *(f"    {p!r}," for p in built["productions"]),
        ")",
        "",
        "ACTION = (",
        *(f"    {tuple(row)!r}," for row in action),
        ")",
        "",
        "GOTO = (",
        *(f"    {tuple(row)!r}," for row in goto),
        ")",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    with open(TABLES_FILE, "w", encoding="utf-8") as f:
        f.write(build_tables())
    print(f"wrote {TABLES_FILE}")
