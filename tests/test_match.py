"""Match stage: pattern semantics, pipeline patterns, and the first-word index."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatekeep.match import RuleIndex, canonical, compile_rule, match_line
from gatekeep.normalize import normalize
from gatekeep.parse import parse_line
from gatekeep.policy import Layer

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
