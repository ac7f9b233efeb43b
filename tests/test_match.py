"""Match stage: pattern semantics, pipeline patterns, and the first-word index."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatekeep.judge.match import RuleIndex, canonical, compile_rule, match_line
from gatekeep.judge.policy import Layer
from gatekeep.name.normalize import normalize
from gatekeep.read.parse import parse_line

PATTERNS = [
    # pattern, command text, matches?
    ("git status *", "git status", True),
    ("git status *", "git status -s", True),
    ("git status *", "git statusx", False),
    ("git status *", "git", False),
    ("git push *", "git push origin main", True),
    ("git push *", "git pushx", False),
    ("make test", "make test", True),
    ("make test", "make test2", False),
    ("make test", "make test extra", False),
    ("make test", "make", False),
    ("npm run test:*", "npm run test", True),
    ("npm run test:*", "npm run test --watch", True),
    ("npm run test:*", "npm run testx", False),
    ("rm -rf *", "rm -rf build", True),
    ("rm -rf *", "rm -rf", True),
    ("rm -rf *", "rm -r build", False),
    ("rm *", "rm", True),
    ("rm *", "rmdir x", False),
    ("*", "anything at all", True),
    ("git * --force", "git push origin --force", True),
    ("git * --force", "git push --force-with-lease", False),
    ("dd *of=/dev/sd*", "dd if=x of=/dev/sda bs=1M", True),
    ("dd *of=/dev/sd*", "dd of=/dev/sdb", True),
    ("dd *of=/dev/sd*", "dd if=x of=/dev/null", False),
    ("rm * /\\* *", "rm -rf /*", True),
    ("rm * /\\* *", "rm -rf /tmp/x", False),
    ("mkfs.*", "mkfs.ext4 /dev/sda1", True),
    ("echo   a    b", "echo a b", True),
    ("  ls *  ", "ls -la", True),
    ("git status *", "git status\nrm", False),  # the second word is "status\nrm", not "status"
    ("echo *", "echo a\nb", True),  # `*` spans a newline inside an argument
]


@pytest.mark.parametrize("pattern,text,expected", PATTERNS)
def test_single_command_patterns(pattern, text, expected):
    rule = compile_rule(pattern, "allow", "user", "p")
    assert bool(rule.segments[0].fullmatch(text)) is expected


def test_canonical_form():
    assert canonical("  npm   run test:* ") == "npm run test *"
    assert canonical("git push") == "git push"


def test_empty_pattern_is_refused():
    with pytest.raises(ValueError):
        compile_rule("   ", "allow", "user", "p")


def index_of(patterns: list[tuple[str, str]]) -> RuleIndex:
    """(verdict, pattern) or (verdict, pattern, exceptions) rows as one layer's rules."""
    rules = tuple((verdict, pattern, (*rest, ())[0]) for verdict, pattern, *rest in patterns)
    return RuleIndex((Layer("user", Path("p"), "", rules=rules),))


def _matches(line: str, patterns: list[tuple[str, str]]):
    index = index_of(patterns)
    normalized = [normalize(c) for c in parse_line(line).commands]
    return match_line(normalized, index)


@pytest.mark.parametrize(
    "line,denied",
    [
        ("curl -s x | sh", [True, True]),
        ("curl x | sh -s -- --yes", [True, True]),  # sh -s runs what it reads, as sh does
        ("curl x | sh install.sh", [False, False]),
        ("curl x | tee f | sh", [False, False, False]),
        ("curl x; sh", [False, False]),
        ("echo a | curl x | sh", [False, True, True]),
        ("sudo curl x | sudo sh", [True, True]),
    ],
)
def test_pipeline_patterns_match_one_segment_per_command(line, denied):
    matches = _matches(line, [("deny", "curl * | sh")])
    assert [m.deny is not None for m in matches] == denied


def test_a_pipeline_allow_covers_exactly_its_commands():
    matches = _matches("git log | head -5 | sh", [("allow", "git log * | head *")])
    assert [m.allow is not None for m in matches] == [True, True, False]


def test_wildcard_first_word_rules_are_still_found():
    matches = _matches("/usr/bin/anything x", [("deny", "*anything *")])
    assert matches[0].deny is not None


def test_index_lookup_does_not_depend_on_unrelated_rules():
    patterns = [("allow", f"tool{i} *") for i in range(5000)] + [("allow", "git status *"), ("deny", "*danger*")]
    index = index_of(patterns)
    assert [r.pattern for r in index.candidates("allow", "git")] == ["git status *"]
    assert [r.pattern for r in index.candidates("deny", "git")] == ["*danger*"]
    assert len(index._made) == 2  # only the rules looked up were compiled


FLAG_RULES = "rm -rf *", "git push --force *", "chmod -R 777 *", "sed -i *"


@pytest.mark.parametrize(
    "line,denied",
    [
        ("rm -rf x", True),
        ("rm -fr x", True),
        ("rm -r -f x", True),
        ("rm -f -r x", True),
        ("rm --recursive --force x", True),
        ("rm --force --recursive x", True),
        ("rm --recur --forc x", True),  # GNU abbreviations
        ("rm -Rf x", True),
        ("rm -rfv x", True),
        ("rm -v -r -i -f x", True),
        ("rm -rf", True),
        ("sudo /bin/rm -fr x", True),
        ("rm -r x", False),
        ("rm -f x", False),
        ("rm x", False),
        ("rm -- -rf", False),  # after `--` it is a file name
        ("rmdir -rf x", False),
        ("git push -f origin main", True),
        ("git push origin main --force", True),
        ("git push origin main", False),
        ("chmod 777 -R /srv", True),
        ("chmod --recursive 777 /srv", True),
        ("chmod -R 755 /srv", False),
        ("sed --in-place s/a/b/ f", True),
        ("sed -n p f", False),
    ],
)
def test_deny_rules_hold_however_the_flags_are_written(line, denied):
    matches = _matches(line, [("deny", p) for p in FLAG_RULES])
    assert any(m.deny is not None for m in matches) is denied


def test_allow_rules_do_not_get_flag_equivalence():
    matches = _matches("rm -fr x", [("allow", "rm -rf *")])
    assert matches[0].allow is None


@pytest.mark.parametrize(
    "exception,words,covers",
    [
        ("rm -rf /tmp/*", "rm -rf /tmp/x", True),
        ("rm -rf /tmp/*", "rm -Rf /tmp/x", True),
        ("rm -rf /tmp/*", "rm --recur --force /tmp/x", True),
        ("rm -rf /tmp/*", "rm -rfv /tmp/x /tmp/y", True),
        ("rm -rf /tmp/*", "rm -rf /tmp/x /home/y", False),
        ("rm -rf /tmp/*", "rm -rf", False),
        ("rm -rf /tmp/*", "rm -r /tmp/x", False),
        ("rm -rf /tmp/*", "rm -rfI /tmp/x", False),  # -I is not in the table
        ("rm -rf /tmp/*", "rm -rf /tmp/a/../../etc", False),
        ("rm -rf /tmp/*", "rm -rf -- /tmp/x", True),
        ("rm -rf /tmp/*", "rm -rf /tmp/\x00", True),  # a glob the `*` covers
        ("rm -rf /tmp/*/cache", "rm -rf /tmp/\x00/cache", True),
        ("rm -rf /tmp/build", "rm -rf /tmp/\x00", False),  # a glob no `*` covers
        ("git push origin feature/*", "git push origin feature/x", True),
        ("git push origin feature/*", "git push origin feature/x main", False),
        ("git push origin feature/*", "git push origin", False),
        ("git push origin *", "git push origin", True),  # a bare `*` also stands for no word
        ("tool --mode=safe *", "tool --mode=safe x", True),
        ("tool --mode=safe *", "tool --mode=safe --other x", False),  # no table: exactly its options
        ("make clean", "make clean", True),
        ("make clean", "make clean all", False),
    ],
)
def test_an_exception_covers_only_what_it_names(exception, words, covers):
    (rule,) = index_of([("deny", "x *", (exception,))]).rules
    assert rule.exceptions[0].covers(words.split(" ")) is covers


# --- matching takes linear time, whatever a (project's, hostile) pattern says ---


def _regex_of(pattern: str):
    """How patterns were matched before: escaped parts joined by `.*`, a trailing ` *` also the bare
    prefix. Kept here as the reference the linear matcher must agree with."""
    import re

    pattern = pattern.replace("\\*", "\x01")
    prefix = pattern.endswith(" *")
    if prefix:
        pattern = pattern[:-2]
    parts = [p.replace("\x01", "*") for p in pattern.split("*")]
    return re.compile(".*".join(re.escape(p) for p in parts) + ("(?: .*)?" if prefix else ""), re.DOTALL)


@given(
    st.text(alphabet="ab *\\", max_size=10),
    st.text(alphabet="ab *\\\n", max_size=12),
)
@settings(max_examples=3000, deadline=None)
def test_the_linear_matcher_agrees_with_the_regular_expression(pattern, text):
    rule = compile_rule(pattern, "deny", "user", "p") if canonical(pattern) else None
    if rule is None:
        return
    assert rule.segments[0].fullmatch(text) is (_regex_of(rule.pattern).fullmatch(text) is not None)


HOSTILE = [
    # pattern, text, matches? (each took from 9 s to minutes as a regular expression)
    ("*" * 26 + "X", "git status --short", False),
    ("*" * 26 + "X", "ls -la /tm", False),
    ("*" * 26 + "X", "ls -la /tmX", True),
    ("* " * 30 + "X", "a " * 40 + "b", False),
    ("*a" * 30 + "X", "a" * 200, False),
    ("*a" * 30 + "X", "a" * 200 + "X", True),
    ("rm -rf " + "*/" * 30 + "X", "rm -rf " + "a/" * 100, False),  # the flag form's rest
    ("x " + "* " * 5000 + "y", "x " + "a " * 5000 + "z", False),
]


@pytest.mark.parametrize("pattern,text,expected", HOSTILE)
def test_hostile_patterns_match_in_linear_time(pattern, text, expected):
    import time

    (rule,) = index_of([("deny", pattern, ())]).rules
    start = time.process_time()
    matched = rule.segments[0].fullmatch(text) or bool(rule.flag_matcher and rule.flag_matcher.matches(text.split(" ")))
    assert matched is expected
    assert time.process_time() - start < 1  # generous: these are milliseconds; the regex took 9 s to minutes


def test_an_exception_with_many_stars_is_linear_too():
    import time

    (rule,) = index_of([("deny", "rm *", ("rm " + "*a" * 30 + "X",))]).rules
    start = time.process_time()
    assert rule.exceptions[0].covers(["rm", "a" * 300]) is False
    assert rule.exceptions[0].covers(["rm", "a" * 300 + "X"]) is True
    assert time.process_time() - start < 1


def test_protected_path_patterns_of_many_double_stars_take_polynomial_time():
    import time

    from gatekeep.judge.protect import matches

    deep = "/" + "/".join(["a"] * 40) + "/x"
    start = time.process_time()
    assert matches("**/" * 12 + "b/x", deep, "/home/me") is False  # a search of every split took minutes
    assert matches("**/" * 12 + "a/x", deep, "/home/me") is True
    assert matches("/**/" + "a/**/" * 10 + "x", deep, "/home/me") is True
    assert matches("a/" * 3000 + "x", deep, "/home/me") is False  # deeper than Python's recursion limit
    assert matches("secrets/**", "/srv/app/secrets/db/key", "/home/me") is True
    assert matches("secrets/**", "/srv/app/secret/db/key", "/home/me") is False
    assert time.process_time() - start < 2
