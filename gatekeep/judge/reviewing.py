"""`review:` in the policy: plain-language rules that a reviewer program judges (issue 40).

    review:
      command: [gatekeep-review-llm, -m, llama3.2]   # the reviewer, an argv list
      timeout: 10                                   # seconds it may take (1 to 120; default 10)
      allow:
        - run the project's tests
        - read anything under ~/src
      deny:
        - never touch production databases

A line that would ask is sent to the reviewer (gatekeep/review/reviewer.py says the protocol and
what its answer may change: never a deny, a loss, a secret read or a protected write).

Layers: `command` and `timeout` come from the system and user layers, the user's counting over
the system's. A project's file never names the program: a repository's `.gatekeep.yaml` is
hostile input, and the reviewer runs as you, so a project's `command` is a policy error; its
`timeout` can only shorten the time. Every layer adds descriptions: a project's deny
descriptions always count, its allow descriptions only once it is trusted, as its allow rules.
The program is a name found on PATH or an absolute path, never a relative one (it would be found
in the directory a line runs in). Bounded: at most MAX_DESCRIPTIONS descriptions a layer, each
at most MAX_DESCRIPTION_CHARS characters, with no control characters (they are shown to a model,
and in questions).
"""

from __future__ import annotations

from gatekeep.core.errors import PolicyError
from gatekeep.core.records import record

KEYS = ("command", "timeout", "allow", "deny")
DEFAULT_TIMEOUT, MAX_TIMEOUT = 10, 120
MAX_DESCRIPTIONS, MAX_DESCRIPTION_CHARS = 64, 500
MAX_ARGV, MAX_WORD_CHARS = 64, 4096


class Review(record("Review", "command timeout allow deny", defaults=((), DEFAULT_TIMEOUT, (), ()))):
    """The combined `review:` settings: command (the reviewer's argv, () for none), timeout
    (seconds), allow and deny (descriptions, in layer order)."""

    __slots__ = ()


def parse(name: str, path: str, data: dict, line_of) -> tuple:
    """(command, timeout, allow, deny) as one file sets them: None (and ()) for what it does not set."""
    section = data.get("review")
    if section is None:
        return None, None, (), ()
    example = "e.g. {command: [gatekeep-review-llm, -m, MODEL], timeout: 10, allow: [run the tests]}"
    if not isinstance(section, dict):
        raise PolicyError(path, f"must be a mapping, {example}", line_of(data, "review"), "review")
    for key in section:
        if key not in KEYS:
            raise PolicyError(path, f"unknown key; expected {', '.join(KEYS)}", line_of(section, key), f"review.{key}")
    command = section.get("command")
    if command is not None:
        if name == "project":
            why = "a project's policy cannot name a reviewer to run: set it in your own policy"
            raise PolicyError(path, why, line_of(section, "command"), "review.command")
        if (
            not isinstance(command, list)
            or not 1 <= len(command) <= MAX_ARGV
            or not all(isinstance(w, str) and w and "\0" not in w and len(w) <= MAX_WORD_CHARS for w in command)
        ):
            why = f"must be a list of 1 to {MAX_ARGV} words, the program first (not a shell line), {example}"
            raise PolicyError(path, why, line_of(section, "command"), "review.command")
        if "/" in command[0] and not command[0].startswith("/"):
            why = (
                "the reviewer is a program found on PATH or an absolute path: a relative path would be"
                " looked up in whatever directory a line runs in, a repository's among them"
            )
            raise PolicyError(path, why, line_of(section, "command"), "review.command")
        command = tuple(str(w) for w in command)
    timeout = section.get("timeout")
    if timeout is not None and (type(timeout) is not int or not 1 <= timeout <= MAX_TIMEOUT):
        why = f"must be a whole number of seconds, 1 to {MAX_TIMEOUT}"
        raise PolicyError(path, why, line_of(section, "timeout"), "review.timeout")
    return command, None if timeout is None else int(timeout), _descriptions(path, section, "allow", line_of), _descriptions(
        path, section, "deny", line_of
    )


def _descriptions(path: str, section: dict, key: str, line_of) -> tuple[str, ...]:
    value = section.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_DESCRIPTIONS:
        why = f"must be a list of at most {MAX_DESCRIPTIONS} descriptions in plain language"
        raise PolicyError(path, why, line_of(section, key), f"review.{key}")
    for i, entry in enumerate(value):
        if (
            not isinstance(entry, str)
            or not entry.strip()
            or len(entry) > MAX_DESCRIPTION_CHARS
            or any(ord(c) < 32 or ord(c) == 127 for c in entry)
        ):
            why = f"each description is one line of text, at most {MAX_DESCRIPTION_CHARS} characters"
            raise PolicyError(path, why, line_of(section, key), f"review.{key}[{i}]")
    return tuple(str(entry).strip() for entry in value)


def worth_asking(verdict, review: Review) -> bool:
    """Whether the reviewer could change anything for `verdict` (decide.LineVerdict): a line that
    asks, a reviewer, and descriptions its verdict could count by (an allow only where the line
    may be allowed). Here, not in review/, so that a check without a reviewer loads none of it."""
    if verdict.decision != "ask" or not review.command:
        return False
    return bool(review.deny) or (bool(review.allow) and bool(verdict.reviewable))


def combine(layers) -> Review:
    """The layers' settings combined (module docstring); each layer's `review` is parse()'s 4-tuple."""
    command, timeout, allow, deny = (), DEFAULT_TIMEOUT, [], []
    for layer in layers:
        own_command, own_timeout, own_allow, own_deny = layer.review
        if layer.name == "project":
            timeout = min(timeout, own_timeout) if own_timeout is not None else timeout
        else:
            command = own_command if own_command is not None else command
            timeout = own_timeout if own_timeout is not None else timeout
        allow += own_allow  # (an untrusted project's are set aside when it is read: policy._untrusted)
        deny += own_deny
    return Review(command, timeout, tuple(dict.fromkeys(allow)), tuple(dict.fromkeys(deny)))
