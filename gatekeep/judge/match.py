"""Match stage: policy patterns against the normalized commands of a line.

A pattern is matched against one simple command's words joined by single
spaces. `*` matches any run of characters (`\\*` is a literal star); a
trailing ` *` also matches the bare prefix (`git push *` matches `git push`,
not `git pushx`); a pattern without `*` is exact. Claude Code's
`npm run test:*` is read as `npm run test *`. A pattern with ` | ` in it
matches a pipeline, one segment per simple command, so no `*` ever spans two
commands.

Rules are indexed by their literal first word and compiled on first use, so a
lookup costs the same however many rules the policy has.

Matching takes time linear in the text whatever the pattern (Glob): a project's
`.gatekeep.yaml` is hostile input, and a pattern of 26 `*` and an `X` compiled
to a regular expression took 40 s to fail on `git status --short`.
"""

from __future__ import annotations

import marshal

from gatekeep.core.records import cached_property, record
from gatekeep.judge.managed import FLOORS
from gatekeep.name.normalize import Normalized
from gatekeep.name.wildmatch import UNKNOWN, could_match, unknown_parts

VERDICTS = ("allow", "ask", "deny")


class FlagMatcher(record("FlagMatcher", "name flags rest aliases")):
    """A deny/ask pattern read as: command name, a set of options, then the rest.

    `rm -rf *` matches any `rm` whose options include -r and -f, however they
    are written (`-fr`, `-r -f`, `--recursive --force`, `-rfv`), followed by
    anything. Spellings come from `flag-aliases` in tools/*.toml; commands not listed there
    keep their options as written (a set, so order still does not matter).

    name: word tuple; flags: frozenset of canonical options; rest: a Segment for the
    other words; aliases: option spelling -> canonical spelling.
    """

    __slots__ = ()

    def matches(self, form: tuple[str, ...]) -> bool:
        if tuple(form[: len(self.name)]) != self.name:
            return False
        flags, positional = split_options(form[len(self.name) :], self.aliases)
        return self.flags <= flags and self.rest.fullmatch(" ".join(positional))

    def could_match(self, words: list[str]) -> bool:
        """With unknown words (see wildmatch.py): any of them might supply the missing options."""
        if tuple(words[: len(self.name)]) != self.name:
            return False
        known = [w for w in words[len(self.name) :] if UNKNOWN not in w]
        flags, _ = split_options(known, self.aliases)
        return self.flags <= flags or len(known) < len(words) - len(self.name)


def split_options(words, aliases: dict[str, str] | None) -> tuple[frozenset[str], list[str]]:
    """Options (canonical spellings) and the other words, in order; `--` ends the options."""
    flags: set[str] = set()
    positional: list[str] = []
    words = list(words)
    for i, word in enumerate(words):
        if word == "--":
            positional.extend(words[i + 1 :])
            break
        if not word.startswith("-") or word == "-":
            positional.append(word)
        elif aliases is None:
            flags.add(word)
        elif word.startswith("--"):
            flags.update(_canonical(_long_option(word.split("=", 1)[0], aliases)))
        else:
            for c in word[1:]:
                flags.update(_canonical(aliases.get(f"-{c}", f"-{c}")))
    return frozenset(flags), positional


def _canonical(spelling) -> tuple[str, ...]:
    """An alias maps to one canonical option, or to several (`git branch -D` is `-d -f`)."""
    return (spelling,) if isinstance(spelling, str) else tuple(spelling)


def _long_option(option: str, aliases: dict[str, str]) -> str:
    if option in aliases:
        return aliases[option]
    known = {spelling for spelling in aliases if spelling.startswith("--") and spelling.startswith(option)}
    # a GNU abbreviation: any prefix that only one known spelling starts with (`--r` = `--recursive`);
    # if the tool has another option with that prefix, it refuses the word, so matching is still safe
    return aliases[known.pop()] if len(known) == 1 and len(option) > 2 else option


class Rule(record("Rule", "pattern verdict layer path excepts", defaults=((),))):
    """One policy pattern (canonical, see canonical()) with its verdict, the layer and file it
    comes from, and the patterns of its exceptions (canonical too; see RuleExceptions).

    No __slots__: the cached properties below keep their values in the instance dict.
    """

    def describe(self) -> str:
        excepts = "".join(f" except '{e}'" for e in self.excepts[:1]) + (" …" if len(self.excepts) > 1 else "")
        return f"rule '{self.pattern}'{excepts} ({self.verdict}) in the {self.layer} policy ({self.path})"

    # Compiled on first use: a policy of 10,000 rules compiles only those a line's words can reach.
    @cached_property
    def literal_start(self) -> str:
        """The text every match of the first segment starts with: what comes before any `*` or `\\`,
        without a trailing space (`git push *` also matches `git push`)."""
        first = self.pattern.split(" | ", 1)[0]
        end = min((i for i in (first.find("*"), first.find("\\")) if i >= 0), default=len(first))
        return first[:end].rstrip(" ")

    @cached_property
    def segments(self) -> tuple[Segment, ...]:
        return tuple(Segment.of(s) for s in self.pattern.split(" | "))

    @cached_property
    def first_word(self) -> str | None:
        """The literal first word every match starts with; None when it holds a wildcard."""
        return first_word(self.pattern)

    @cached_property
    def flag_matcher(self) -> FlagMatcher | None:
        return _flag_matcher(self.pattern) if self.verdict != "allow" and " | " not in self.pattern else None

    @cached_property
    def exceptions(self) -> tuple[RuleException, ...]:
        return tuple(_exception(e) for e in self.excepts)


def canonical(pattern: str) -> str:
    """The form a pattern is stored and compared in: single spaces, and Claude Code's `:*` after
    a word (`git push:*`, `npm run test:*`) read as ` *`. Not after a word that holds `/`, `.` or
    `:` (`http://127.0.0.1:*`, `host.example:*`): there the `*` is a port or a name's end."""
    text = " ".join(pattern.split())
    if text.endswith(":*") and not text.endswith("\\:*"):
        last = text[:-2].rsplit(" ", 1)[-1]
        if not any(c in last for c in "/.:"):
            text = text[:-2] + " *"
    return text


def first_word(pattern: str) -> str | None:
    first = pattern.split(" ", 1)[0]
    return None if "*" in first.replace("\\*", "") else first.replace("\\*", "*")


def compile_rule(pattern: str, verdict: str, layer: str, path: str, excepts=()) -> Rule:
    text = canonical(pattern)
    if not text:
        raise ValueError("a pattern cannot be empty")
    return Rule(text, verdict, layer, path, tuple(canonical(e) for e in excepts))


def _flag_matcher(text: str) -> FlagMatcher | None:
    """For a deny or ask pattern with options after a literal name: `rm -rf *`, `git push --force *`.

    Allow rules never get one: an allow stays exactly as written.
    """
    parts = _flag_parts(text)
    if parts is None:
        return None
    name, flags, rest, aliases = parts
    return FlagMatcher(name, flags, Segment.of(" ".join(rest)), aliases or {})


def _flag_parts(text: str):
    """(name, canonical options, the other words, the name's option spellings or None), or None
    when the pattern has no options after a literal name."""
    from gatekeep.name.knowledge import load_table

    words = text.split(" ")
    n = next((i for i, w in enumerate(words) if w.startswith("-")), None)
    if not n or any("*" in w for w in words[:n]):
        return None
    # the options end at the first other word, or at `--`, which the rest must then match as written
    end = next((i for i in range(n, len(words)) if not words[i].startswith("-") or words[i] == "--"), len(words))
    if end == n or any("*" in w for w in words[n:end]):
        return None  # `git checkout -- *`: no options to read, only the pattern as written
    name = tuple(words[:n])
    aliases = load_table().flag_aliases(" ".join(name))
    flags, _ = split_options(words[n:end], aliases)
    return name, flags, words[end:], aliases


class RuleException(record("RuleException", "name flags words aliases")):
    """One exception of a deny or ask rule: `rm -rf *` except `rm -rf /tmp/*`.

    An exception narrows a rule; it allows nothing itself (what it excepts goes on to the
    other rules, the loss and write checks and the default). So it is read strictly:
    - each `*` stands for part of one word (it never spans two), and a last word with a `*`
      is tried against each of the command's remaining words (`rm -rf /tmp/a /tmp/b`);
    - a word with a `..` component never fits (`/tmp/../home`);
    - options are read as the rule's are (`-fr` is `-rf`), but the command may add only
      options known to take no value (`flag-aliases` in tools/*.toml); a tool without such a table must
      have exactly the exception's options;
    - a word whose value comes from a variable, a substitution or a brace list never fits
      (the rule still applies, or asks when it only could match); a glob fits only where
      an exception's `*` covers it, since its names stay in that place.

    name: the words before the options (None: the pattern has no options, and its words are
    compared one by one); flags: canonical options; words: a Glob per remaining word.
    """

    __slots__ = ()

    def covers(self, words: list[str]) -> bool:
        if any(_climbs(w) for w in words):
            return False
        if self.name is None:
            return _words_fit(self.words, words)
        if tuple(words[: len(self.name)]) != self.name:
            return False
        flags, positional = split_options(words[len(self.name) :], self.aliases)
        if not self.flags <= flags:
            return False
        known = {c for s in (self.aliases or {}).values() for c in _canonical(s)}
        if flags - self.flags - known:
            return False
        return _words_fit(self.words, positional)


def _exception(text: str) -> RuleException:
    parts = _flag_parts(text)
    if parts is None:
        return RuleException(None, frozenset(), tuple(Glob.of(w) for w in text.split(" ")), None)
    name, flags, rest, aliases = parts
    return RuleException(name, flags, tuple(Glob.of(w) for w in rest if w), aliases)


def _words_fit(patterns: tuple[Glob, ...], words: list[str]) -> bool:
    """Word k against pattern k; a last pattern with a `*` takes each word left (a bare `*` none too)."""
    if not patterns:
        return not words
    *fixed, last = patterns
    if len(words) < len(fixed) or not all(p.fullmatch(w) for p, w in zip(fixed, words, strict=False)):
        return False
    rest = words[len(fixed) :]
    if not last.starred:
        return len(rest) == 1 and last.fullmatch(rest[0])
    return (bool(rest) or last.parts == ("", "")) and all(last.fullmatch(w) for w in rest)


def _climbs(word: str) -> bool:
    """A `..` component, or a glob one that may be `..` (`.?`, `.*`: bash before 5.2 matches it)."""
    return any(
        part == ".." or (UNKNOWN in part and "." in part and not part.strip("." + UNKNOWN)) for part in word.split("/")
    )


class Glob:
    """Literal text and `*`, which stands for any run of characters (newlines too); `\\*` is a
    literal star. It is what `.*` between escaped parts would match as a regular expression,
    found without backtracking: the first part must start the text, the last must end it,
    and each part between is taken at its leftmost place after the one before (the leftmost
    place leaves the most text for the parts after it, so none that fits is missed). So a
    match costs one pass of str.find per part, never the text's length to the power of the
    number of stars, which a hostile pattern (`**…*X`, `* * * … X`) made minutes.

    parts: the literal text between stars (one part: no star); starred: whether it has a `*`.
    """

    __slots__ = ("parts", "starred")

    def __init__(self, parts: tuple[str, ...]) -> None:
        self.parts = parts
        self.starred = len(parts) > 1

    @classmethod
    def of(cls, text: str) -> Glob:
        parts = [""]
        for k, chunk in enumerate(text.split("\\*")):
            if k:
                parts[-1] += "*"  # an escaped star is a literal one
            first, *more = chunk.split("*")
            parts[-1] += first
            parts += more
        # stars in a row are one star: dropping the empty parts between them changes nothing
        return cls((parts[0], *(p for p in parts[1:-1] if p), parts[-1]) if len(parts) > 2 else tuple(parts))

    def fullmatch(self, text: str) -> bool:
        parts = self.parts
        first = parts[0]
        if len(parts) == 1:
            return text == first
        last = parts[-1]
        end = len(text) - len(last)
        if end < len(first) or not text.startswith(first) or not text.endswith(last):
            return False
        at = len(first)
        for part in parts[1:-1]:
            found = text.find(part, at, end)
            if found < 0:
                return False
            at = found + len(part)
        return True

    def __repr__(self) -> str:
        return f"Glob({'*'.join(self.parts)!r})"


class Segment(record("Segment", "globs")):
    """One pipeline segment of a pattern: its Glob, and for a trailing ` *` also the Glob of what
    comes before it (`git push *` matches `git push`, not `git pushx`)."""

    __slots__ = ()

    @classmethod
    def of(cls, segment: str) -> Segment:
        if segment.endswith(" *"):
            return cls((Glob.of(segment), Glob.of(segment[:-2])))
        return cls((Glob.of(segment),))

    def fullmatch(self, text: str) -> bool:
        return any(glob.fullmatch(text) for glob in self.globs)


class RuleIndex:
    """Rules by verdict and literal first word, in policy order.

    Built from the layers' (verdict, pattern) lists; a Rule object is made only
    when its bucket is looked up, so neither a lookup nor loading a cached
    index (policy.py) grows with the number of rules.
    """

    def __init__(self, layers, by_word: dict | None = None, wild: dict | None = None):
        self._layers = layers
        if by_word is None or wild is None:
            by_word, wild = index_positions(layers)
        # (verdict, first word) -> [(layer, rule) positions]; from the cache, each list comes
        # packed (marshal bytes) and is unpacked when first looked up: loading a policy of
        # 10,000 rules then costs a few hundred lists' worth of bytes, not 10,000 tuples
        self.by_word = by_word
        self.wild = wild  # verdict -> positions of rules whose first word has a wildcard
        self._made: dict[tuple[int, int], Rule] = {}
        self._matching: dict[tuple[str, str], list[Rule]] = {}
        self._wild_starts: dict[str, dict[str, list[tuple[tuple[int, int], Rule]]]] = {}
        self._of_verdict: dict[str, list[Rule]] = {}

    def _rule(self, position: tuple[int, int]) -> Rule:
        rule = self._made.get(position)
        if rule is None:
            layer = self._layers[position[0]]
            verdict, pattern, excepts = layer.rules[position[1]]
            rule = self._made[position] = compile_rule(pattern, verdict, layer.name, str(layer.path), excepts)
        return rule

    @property
    def rules(self) -> list[Rule]:
        return [self._rule((i, j)) for i, layer in enumerate(self._layers) for j in range(len(layer.rules))]

    def candidates(self, verdict: str, first_word: str) -> list[Rule]:
        positions = [*_unpacked(self.by_word, (verdict, first_word)), *_unpacked(self.wild, verdict)]
        return [self._rule(p) for p in positions]

    def matching(self, verdict: str, first_word: str) -> list[Rule]:
        """candidates() without the wildcard rules whose literal start the first word does not
        have (`mkfs.*` for `ls`): the rules a command of known words starting with `first_word`
        can match, in policy order. Kept per word, so a line of many commands (thousands, in a
        long line) looks each of its first words up once, not every wildcard rule per command.

        A wildcard rule's literal start lies within its first word (the `*` that makes it a
        wildcard rule is in that word), so it starts the command's text exactly when it starts
        its first word."""
        key = (verdict, first_word)
        found = self._matching.get(key)
        if found is None:
            starts = self._wild_starts.get(verdict)
            if starts is None:
                starts = self._wild_starts[verdict] = {}
                for p in _unpacked(self.wild, verdict):
                    rule = self._rule(p)
                    starts.setdefault(rule.literal_start[:1], []).append((p, rule))
            wild = [*starts.get("", ()), *(starts.get(first_word[:1], ()) if first_word else ())]
            wild.sort(key=lambda entry: entry[0])
            found = [self._rule(p) for p in _unpacked(self.by_word, key)]
            found += [rule for _, rule in wild if first_word.startswith(rule.literal_start)]
            self._matching[key] = found
        return found

    def of_verdict(self, verdict: str) -> list[Rule]:
        found = self._of_verdict.get(verdict)
        if found is None:
            found = self._of_verdict[verdict] = [rule for rule in self.rules if rule.verdict == verdict]
        return found


def _unpacked(index: dict, key) -> list | tuple:
    positions = index.get(key, ())
    if type(positions) is bytes:
        positions = index[key] = marshal.loads(positions)
    return positions


def pack(index: dict) -> dict:
    """The index with each list of positions as marshal bytes, for the cache (see RuleIndex)."""
    return {key: marshal.dumps(tuple(positions)) for key, positions in index.items()}


def index_positions(layers) -> tuple[dict, dict]:
    by_word: dict[tuple[str, str], list[tuple[int, int]]] = {}
    wild: dict[str, list[tuple[int, int]]] = {}
    for i, layer in enumerate(layers):
        for j, (verdict, pattern, _) in enumerate(layer.rules):
            word = _indexed_word(pattern)
            if word is None:
                wild.setdefault(verdict, []).append((i, j))
            else:
                by_word.setdefault((verdict, word), []).append((i, j))
    return by_word, wild


def _indexed_word(pattern: str) -> str | None:
    """first_word(canonical(pattern)) without joining all of a pattern's words, for 10,000 rules:
    canonical only changes the first word of a one-word pattern ending in `:*` (`git:*`)."""
    words = pattern.split(None, 1)
    first = words[0] if words else ""
    claude_suffix = first.endswith(":*") and not first.endswith("\\:*") and not any(c in first[:-2] for c in "/.:")
    if len(words) == 1 and claude_suffix:
        first = first[:-2]
    return first if "*" not in first else first_word(first)


class Matches:
    """The first rule of each verdict that matched one command; maybe_*: a rule that would
    match for some value of the command's variables or globs."""

    __slots__ = ("deny", "ask", "allow", "maybe_deny", "maybe_ask")

    def __init__(self) -> None:
        self.deny = self.ask = self.allow = self.maybe_deny = self.maybe_ask = None

    def add_stricter(self, other: Matches) -> None:
        """Take `other`'s deny and ask rules (and their maybes) where this has none; never its allow."""
        for name in ("deny", "ask", "maybe_deny", "maybe_ask"):
            if getattr(self, name) is None:
                setattr(self, name, getattr(other, name))

    def __repr__(self) -> str:
        found = ", ".join(f"{name}={getattr(self, name).pattern!r}" for name in self.__slots__ if getattr(self, name))
        return f"Matches({found})"


def match_line(commands: list[Normalized], index: RuleIndex, locked: tuple[Rule, ...] = ()) -> list[Matches]:
    """The rules each command matches; `locked` (Policy.locked): a command one of them matches
    keeps only an allow rule of the system or managed policy (policy.py)."""
    matches = [Matches() for _ in commands]
    slots = {(n.command.pipeline, n.command.position): i for i, n in enumerate(commands)}
    # an exception is judged on one command as the file system is now: another command of the
    # line could first make a link (`ln -s ~ /tmp/h && rm -rf /tmp/h/`), so only a line of one
    # command gets exceptions
    excepting = len(commands) == 1
    locks = [locked_by(n, locked) is not None for n in commands] if locked else None  # once a command
    for i, normalized in enumerate(commands):
        for verdict in ("deny", "ask"):
            if getattr(matches[i], verdict) is None:
                _match_forms(verdict, i, commands, slots, index, matches, excepting)
            if getattr(matches[i], verdict) is None and normalized.unknown_forms:
                setattr(matches[i], f"maybe_{verdict}", _could_match(verdict, normalized, index, excepting))
        if normalized.allow_form:
            _match_allow(i, commands, slots, index, matches, locks)
    return matches


def locked_by(normalized: Normalized, locked: tuple[Rule, ...]) -> Rule | None:
    """The first of the managed policy's locked patterns that matches any form of the command
    (as a deny rule would: through wrappers, flags in any spelling), or could match it for some
    value of its variables, substitutions and globs (`git $(echo push)`, `git pus?`), or None."""
    forms = [f for f in (normalized.allow_form, *normalized.deny_forms) if f]
    for rule in locked:
        if any(_fits(rule, form, _form_text(form)) for form in forms):
            return rule
        if any(_may_fit(rule, text) for text in normalized.unknown_forms):
            return rule
    return None


def _fits(rule: Rule, form: tuple[str, ...], text: str) -> bool:
    """Whether a deny, ask or lock rule's first segment matches one form (`text`: its words
    joined), as written or by its flags in any spelling."""
    return _matches_text(rule, text) or bool(rule.flag_matcher and rule.flag_matcher.matches(form))


def _may_fit(rule: Rule, text: str) -> bool:
    """Whether it could match an unknown form for some value of its variables and globs."""
    return could_match(rule.pattern, text) or bool(rule.flag_matcher and rule.flag_matcher.could_match(text.split(" ")))


def _could_match(verdict: str, normalized: Normalized, index: RuleIndex, excepting: bool) -> Rule | None:
    for text in normalized.unknown_forms:
        first = text.split(" ", 1)[0]
        rules = index.of_verdict(verdict) if UNKNOWN in first else index.candidates(verdict, first)
        for rule in rules:
            if " | " not in rule.pattern and _may_fit(rule, text):  # a single segment: `.segments` would compile it
                if excepting and rule.excepts and _excepted_unknown(rule, normalized, text):
                    continue
                return rule
    return None


def _excepted_unknown(rule: Rule, normalized: Normalized, text: str) -> bool:
    """Whether an exception covers every value of this form's globs (see RuleException)."""
    for form in normalized.deny_forms:
        words = exception_words(normalized.command, form)
        if words is not None and " ".join(words) == text:
            return _covered(rule, words)
    return False


def _covered(rule: Rule, words: list[str]) -> bool:
    """An exception covers the words as written and, for absolute and ~ paths, as they resolve
    now, through links (`/tmp/h/` where /tmp/h links to the home directory is that directory)."""
    resolved = [_resolved(w) if w.startswith(("/", "~")) else w for w in words[1:]]
    return any(e.covers(words) and e.covers([words[0], *resolved]) for e in rule.exceptions)


def _resolved(word: str) -> str:
    import os

    if word.startswith("~"):
        word = os.path.expanduser(word)
    cut = word.find(UNKNOWN)
    if cut < 0:
        return os.path.realpath(word)
    head, _, _ = word[:cut].rpartition("/")  # a glob: resolve the directory it is in
    return os.path.realpath(head or "/") + "/" + word[len(head) + 1 :] if "/" in word[:cut] else word


_NOT_A_PLAIN_GLOB = frozenset("$`{}()|^#~<>")


def exception_words(command, form: tuple[str, ...]) -> list[str] | None:
    """The words of a deny form an exception is compared with: as they are, with each glob
    marked UNKNOWN; None when a word's value is not known before it runs (a variable, a
    substitution, a brace list, a zsh glob operator) or the form is not the command's own words."""
    if not any(w.dynamic for w in command.words):
        return list(form)
    argv = command.argv
    k = len(argv) - len(form)
    if k < 0 or tuple(argv[k + 1 :]) != form[1:] or command.words[k].dynamic:
        return None
    words = [form[0]]
    for word in command.words[k + 1 :]:
        if word.dynamic and (word.unsafe or not _NOT_A_PLAIN_GLOB.isdisjoint(word.value)):
            return None
        words.append(unknown_parts(word.value) if word.dynamic else word.value)
    return words


def _form_text(form: tuple[str, ...]) -> str:
    return " ".join(form)


def _match_forms(verdict, i, commands, slots, index, matches, excepting: bool = False) -> None:
    for form in commands[i].deny_forms:
        if not form:
            continue
        text = _form_text(form)
        for rule in index.matching(verdict, form[0]):
            if not _fits(rule, form, text):
                continue
            if excepting and rule.excepts and _excepted(rule, commands[i].command, form):
                continue
            hit = _following(rule, i, commands, slots, lambda n: [_form_text(f) for f in n.deny_forms if f])
            if hit is not None:
                for j in hit:
                    if getattr(matches[j], verdict) is None:
                        setattr(matches[j], verdict, rule)
                return


def _match_allow(i, commands, slots, index, matches, locks: list[bool] | None = None) -> None:
    """Every allow rule that fits is tried, and each command keeps the most specific one:
    a pipeline pattern over a single one, then the longer pattern (`python3 -c *` over
    `python3 *`), since only a rule that names a risky form may allow it (decide.py). Of a
    locked command (`locks`, by the commands' index: match_line), only the system's and managed
    policy's allow rules."""
    text = _form_text(commands[i].allow_form)
    for rule in index.matching("allow", commands[i].allow_form[0]):
        if not _matches_text(rule, text):
            continue
        hit = _following(rule, i, commands, slots, lambda n: [_form_text(n.allow_form)] if n.allow_form else [])
        if hit and locks and rule.layer not in FLOORS and any(locks[j] for j in hit):
            continue
        for j in hit or ():
            if matches[j].allow is None or _specificity(rule) > _specificity(matches[j].allow):
                matches[j].allow = rule


def _excepted(rule: Rule, command, form: tuple[str, ...]) -> bool:
    words = exception_words(command, form)
    return words is not None and _covered(rule, words)


def _matches_text(rule: Rule, text: str) -> bool:
    """The first segment against one command's text; the literal start is checked first, so the
    wildcard rules every line meets (`mkfs.*`, `PATH=*`) are compiled only when they could match."""
    return text.startswith(rule.literal_start) and rule.segments[0].fullmatch(text)


def _specificity(rule: Rule) -> tuple[int, int]:
    return len(rule.segments), len(rule.pattern.replace("*", ""))


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
