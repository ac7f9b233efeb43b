"""Match stage: policy patterns against the normalized commands of a line.

A pattern is matched against one simple command's words joined by single
spaces. `*` matches any run of characters (`\\*` is a literal star); a
trailing ` *` also matches the bare prefix (`git push *` matches `git push`,
not `git pushx`); a pattern without `*` is exact. Claude Code's
`npm run test:*` is read as `npm run test *`. A pattern with ` | ` in it
matches a pipeline, one segment per simple command, so no `*` ever spans two
commands.

Rules are indexed by their literal first word, so a lookup costs the same
however many rules the policy has.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from gatekeep.normalize import Normalized

VERDICTS = ("allow", "ask", "deny")
_STAR = "\x00"  # stands in for an unescaped `*` while the pattern is escaped


@dataclass(frozen=True)
class Rule:
    pattern: str
    verdict: str
    layer: str
    path: str
    segments: tuple[re.Pattern, ...] = field(compare=False, repr=False)
    first_word: str | None = field(compare=False, repr=False)  # None: starts with a wildcard

    def describe(self) -> str:
        return f"rule '{self.pattern}' ({self.verdict}) in the {self.layer} policy ({self.path})"


def canonical(pattern: str) -> str:
    """The form a pattern is stored and compared in: single spaces, `:*` read as ` *`."""
    text = " ".join(pattern.split())
    if text.endswith(":*") and not text.endswith("\\:*"):
        text = text[:-2] + " *"
    return text


def compile_rule(pattern: str, verdict: str, layer: str, path: str) -> Rule:
    text = canonical(pattern)
    if not text:
        raise ValueError("a pattern cannot be empty")
    segments = tuple(_segment_regex(s) for s in text.split(" | "))
    first = text.split(" ", 1)[0].split(" | ", 1)[0]
    first_word = None if "*" in first.replace("\\*", "") else first.replace("\\*", "*")
    return Rule(text, verdict, layer, path, segments, first_word)


def _segment_regex(segment: str) -> re.Pattern:
    segment = segment.replace("\\*", "\\\x01").replace("*", _STAR).replace("\\\x01", "*")
    prefix = segment.endswith(" " + _STAR)
    if prefix:
        segment = segment[:-2]
    regex = ".*".join(re.escape(part) for part in segment.split(_STAR))
    if prefix:
        regex += "(?: .*)?"
    return re.compile(regex, re.DOTALL)


class RuleIndex:
    """Rules by verdict and literal first word, in policy order."""

    def __init__(self, rules: list[Rule]):
        self._by_word: dict[tuple[str, str], list[Rule]] = defaultdict(list)
        self._wild: dict[str, list[Rule]] = defaultdict(list)
        self.rules = rules
        for rule in rules:
            if rule.first_word is None:
                self._wild[rule.verdict].append(rule)
            else:
                self._by_word[(rule.verdict, rule.first_word)].append(rule)

    def candidates(self, verdict: str, first_word: str) -> list[Rule]:
        return self._by_word.get((verdict, first_word), []) + self._wild.get(verdict, [])


@dataclass
class Matches:
    """The first rule of each verdict that matched one command."""

    deny: Rule | None = None
    ask: Rule | None = None
    allow: Rule | None = None


def match_line(commands: list[Normalized], index: RuleIndex) -> list[Matches]:
    matches = [Matches() for _ in commands]
    slots = {(n.command.pipeline, n.command.position): i for i, n in enumerate(commands)}
    for i, normalized in enumerate(commands):
        for verdict in ("deny", "ask"):
            if getattr(matches[i], verdict) is None:
                _match_forms(verdict, i, commands, slots, index, matches)
        if normalized.allow_form:
            _match_allow(i, commands, slots, index, matches)
    return matches


def _form_text(form: tuple[str, ...]) -> str:
    return " ".join(form)


def _match_forms(verdict, i, commands, slots, index, matches) -> None:
    for form in commands[i].deny_forms:
        if not form:
            continue
        text = _form_text(form)
        for rule in index.candidates(verdict, form[0]):
            if not rule.segments[0].fullmatch(text):
                continue
            hit = _following(rule, i, commands, slots, lambda n: [_form_text(f) for f in n.deny_forms if f])
            if hit is not None:
                for j in hit:
                    if getattr(matches[j], verdict) is None:
                        setattr(matches[j], verdict, rule)
                return


def _match_allow(i, commands, slots, index, matches) -> None:
    text = _form_text(commands[i].allow_form)
    for rule in index.candidates("allow", commands[i].allow_form[0]):
        if not rule.segments[0].fullmatch(text):
            continue
        hit = _following(rule, i, commands, slots, lambda n: [_form_text(n.allow_form)] if n.allow_form else [])
        if hit is not None:
            for j in hit:
                matches[j].allow = matches[j].allow or rule
            return


def _following(rule: Rule, i, commands, slots, texts_of) -> list[int] | None:
    """For a pipeline pattern, the commands its later segments match after command i (or None)."""
    hit = [i]
    command = commands[i].command
    for k, segment in enumerate(rule.segments[1:], start=1):
        j = slots.get((command.pipeline, command.position + k))
        if j is None or not any(segment.fullmatch(t) for t in texts_of(commands[j])):
            return None
        hit.append(j)
    return hit
