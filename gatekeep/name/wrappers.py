"""Wrappers: commands that run another command (`sudo`, `env`, `nice`, `timeout`, `xargs`...).

Each is a tool's table in tools/*.toml that says `wrapper` (most are in tools/wrappers.toml):
the options it knows, which of them take a value, and how many words come before the command
it runs (`wrapper-positionals`: timeout's DURATION). Deny and ask rules see through every
wrapper to a fixed point; allow rules only through the harmless ones (normalize.py).
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy
from gatekeep.core.records import record
from gatekeep.name.knowledge import load_knowledge

ASSIGNMENT = lazy(r"(?s)([A-Za-z_][A-Za-z_0-9]*)\+?=")


class Wrapper(
    record(
        "Wrapper",
        "value_options flags positionals harmless assignments",
        defaults=(frozenset(), frozenset(), 0, False, False),
    )
):
    """A command that runs another one: how to find the inner command among its words.

    value_options: options whose value is the next word; flags: options known to
    take no value; positionals: words between the options and the command
    (timeout's DURATION); harmless: allow rules see through it; assignments:
    takes NAME=value words before the command (env).
    """

    __slots__ = ()


_wrappers: dict[str, Wrapper] = {}  # command word -> its Wrapper, for the words that name one


def wrapper_of(word: str) -> Wrapper | None:
    """The wrapper a command word names (`sudo`, `/usr/bin/nice`), or None: a tool whose table in
    tools/*.toml says `wrapper`, read with its value options and the options it knows."""
    kept = _wrappers.get(word)
    if kept is not None:
        return kept
    found = load_knowledge().table(word, versioned=False)  # `nohup2` is some other program
    if found is None or not found[1].get("wrapper"):
        return None
    table = found[1]
    known = table.get("flags", frozenset()) | table.get("optional-value-options", frozenset())
    wrapper = _wrappers[word] = Wrapper(
        table.get("value-options", frozenset()),
        known,
        table.get("wrapper-positionals", 0),
        table.get("harmless-wrapper", False),
        table.get("wrapper-assignments", False),
    )
    return wrapper


def named_through(word: str) -> bool:
    """Whether a command's name sees through this wrapper (`sudo apt install` is `apt install`): it
    runs the command as it is, as someone else, later or more gently (`named-through`). Any other
    wrapper is named itself (`watch df`, `strace ./app`, `flock f cmd`): what it adds changes what
    runs. Deny and ask rules see through every wrapper whatever its name (unwrap_all)."""
    found = load_knowledge().table(word, versioned=False)
    return found is not None and found[1].get("named-through", False)


def is_bare(word: str) -> bool:
    """Whether `NAME *` would allow anything at all: a shell, `eval`, and every wrapper (`bare`)."""
    found = load_knowledge().table(basename(word))
    return found is not None and bool(found[1].get("bare") or found[1].get("wrapper"))


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] or word


# Every form of a command is matched against the deny rules, and most forms are most of its words:
# a wrapper's inner command, or each word after a wrapper option gatekeep does not know. So the
# forms' words grow as the square of the command's (`sudo env nice ` 9,000 times took minutes). A
# command whose forms would hold more than FORM_WORDS + FORM_WORDS_PER_WORD x its words is not
# read further: it is denied (normalize.py, decide.py), which is never looser than what trying
# every form would find. A real command stays far below: 3 wrappers of any length, or 200 words
# after an unknown option.
FORM_WORDS = 20_000
FORM_WORDS_PER_WORD = 3


def unwrap_all(argv: list[str]) -> tuple[list[str], list[tuple[str, ...]], list[str], str | None]:
    """Every form of `argv` for deny and ask rules, the innermost command (for its name),
    the wrappers passed through on the way (`["sudo", "watch"]`), and why the forms are not
    all there (None: they are; see FORM_WORDS)."""
    forms: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    chain: list[str] = []
    budget = FORM_WORDS + FORM_WORDS_PER_WORD * len(argv)

    def add(words: list[str]) -> bool:
        """Add the forms of `words`; False when they would pass the budget."""
        nonlocal budget
        variants = [tuple(words), (basename(words[0]), *words[1:])]
        if words[0].startswith("=") and len(words[0]) > 1:  # zsh runs `=rm` as the rm on PATH
            variants.append((basename(words[0][1:]), *words[1:]))
        for form in variants:
            if form not in seen:
                budget -= len(form)
                if budget < 0:
                    return False
                seen.add(form)
                forms.append(form)
        return True

    current = argv
    innermost = argv
    run_by_runner = False
    while current:
        if not add(current):
            return innermost, forms, chain, _too_many(argv)
        if not run_by_runner:
            innermost = current
        wrapper = wrapper_of(basename(current[0]))
        if wrapper is None:
            # a runner (`npx`, `pnpm dlx`, `npm exec`: `runner` in tools/) runs its operands as a
            # command: deny and ask rules see it; the name, and so what a rule must name to allow
            # it, stays the runner's own line
            from gatekeep.name.knowledge import load_table

            inner = load_table().runner_inner(current) if len(current) > 1 else None
            if not inner:
                break
            run_by_runner, current = True, inner
            continue
        if not run_by_runner:  # (`npx sudo rm`: deny rules see through, the name stays the runner's)
            chain.append(basename(current[0]))
        inner, sure = unwrap(wrapper, current)
        if not sure:
            for start in range(1, len(current)):
                if not current[start].startswith("-") and not add(current[start:]):
                    return innermost, forms, chain, _too_many(argv)
        current = inner
    return innermost, forms, chain, None


def _too_many(argv: list[str]) -> str:
    limit = FORM_WORDS + FORM_WORDS_PER_WORD * len(argv)
    return (
        f"its wrappers and their options give more than {limit:,} words of commands it may run"
        " (wrappers nested deep, or many words after an option gatekeep does not know),"
        " too many to try every deny rule on"
    )


def unwrap(wrapper: Wrapper, argv: list[str]) -> tuple[list[str], bool]:
    """The command inside one wrapper, and whether every option was one gatekeep knows."""
    words = argv[:0:-1]  # a stack, the next word on top: taking a word, or putting back env -S's, costs no copy
    sure = True
    while words:
        word = words[-1]
        if word == "--":
            words.pop()
            break
        if wrapper.assignments and ASSIGNMENT.match(word):
            words.pop()
        elif word.startswith("-") and len(word) > 1:
            words.pop()
            option = word.split("=", 1)[0]
            split = _split_string_option(word, words) if wrapper.assignments else None
            if split is not None:
                # env -S 'cmd args', -S'cmd args', -iS 'cmd': the string is split into the command's words
                words.extend(reversed(split))
            elif option in wrapper.value_options and "=" not in word:
                if words:
                    words.pop()
            elif option not in wrapper.flags and option not in wrapper.value_options:
                sure = _is_short_value_form(word, wrapper) and sure
        else:
            break
    words.reverse()
    skip = min(wrapper.positionals, len(words))
    return words[skip:], sure


def _split_string_option(word: str, rest: list[str]) -> list[str] | None:
    """The words of env's -S/--split-string STRING (taking STRING from the top of the stack `rest`
    when it is the next word)."""
    import shlex

    if word.startswith("--"):
        if word.split("=", 1)[0] not in ("--split-string", "--split", "--spli"):
            return None
        value = word.split("=", 1)[1] if "=" in word else (rest.pop() if rest else "")
    elif "S" in word[1:] and set(word[1 : word.index("S", 1)]) <= set("i0v"):  # -S, -iS, -S'cmd'
        value = word[word.index("S", 1) + 1 :] or (rest.pop() if rest else "")
    else:
        return None
    try:
        return shlex.split(value)  # env -S honours quotes and backslashes, as shlex does
    except ValueError:
        return value.split()


def _is_short_value_form(word: str, wrapper: Wrapper) -> bool:
    """`-uroot`, `-n5`, `-5` (nice): a known short option with its value attached."""
    if word[:2] in wrapper.value_options:
        return True
    return word[1:].isdigit() and "-n" in wrapper.value_options
