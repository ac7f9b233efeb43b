"""yamlio.load_plain reads what ruamel.yaml's round-trip loader reads, or raises NotSure; so
policy.parse_layer gives the same layer, or the same error, with or without it.

Both properties are checked on generated policies (every key, valid and invalid values,
YAML-special scalars in every quoting style, flow and block style, comments, anchors, tags,
directives, documents, tabs, BOM, CRLF), on random mutations of them, on random text, and on
a table of hand-written cases. GATEKEEP_YAML_EXAMPLES=20000 runs a longer search.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from gatekeep.core import resources
from gatekeep.core.errors import PolicyError
from gatekeep.judge import policy, yamlio
from gatekeep.judge.match import _indexed_word, canonical, first_word
from gatekeep.judge.yamlio import NotSure, load_plain, load_roundtrip

EXAMPLES = int(os.environ.get("GATEKEEP_YAML_EXAMPLES", "300"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),  # as tests/test_fuzz.py: a fixed sequence in CI
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PATH = "/test/policy.yaml"
pytestmark = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")

# YAML-special strings: they are other types, indicators, comments, or need quoting
TRICKY = [
    "yes", "no", "on", "off", "y", "n", "Yes", "NO", "On", "OFF",
    "null", "Null", "NULL", "~", "", "true", "True", "TRUE", "false", "False", "FALSE", "tRUE",
    "1.0", "1.", ".5", "1e3", "1E-3", "0x1F", "0o17", "0b101", "012", "08", "0", "00", "30", "300",
    "3600", "3601", "-5", "+5", "1_000", "1__0", "_1", "1_", "99999999999999999999", "1:30", "-0",
    ".inf", "-.inf", "+.INF", ".nan", ".NaN", "NaN", "inf",
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-1-1 1:00:00",
    "<<", "=", "<", "<<x",
    "*", "* x", "x *", "& x", "&x", "! x", "!x", "!!str", "%x", "% x", "@x", "`x", "- x", "-x", "-", "--",
    "---", "...", "--- x", ": x", ":x", "x:", "x: y", "x:y", "x :y", "? x", "?x", "x?",
    "#x", "x #y", "x#y", "x # y", "[a]", "[a, b]", "{a}", "{a: b}", ",a", "a,b", "a, b", "a]", "a}",
    "|", ">", "|-", ">+", "'", '"', "it's", 'say "hi"', "\\", "a\\b", "\\*", "a\\\\b", "\\n",
    "git status *", "rm -rf *", "curl * | sh", "git push origin HEAD:main", "~/.ssh", "*.pem",
    "ask", "allow", "deny", "enforce", "audit", "tty", "remote", "both", "key", "word", "/dev/log",
    "ünïcödé", "日本語", " lead", "trail ", "a  b", "a\tb", "\t", "a\u00a0b", "\u3000", "\ufeff",
    "\x85", "\u2028", "\x00", "\x7f", "\x1b[0m", "\r", "a\nb", "é" * 3,
]  # fmt: skip
KEY_WORDS = [
    *policy.KEYS, "allow", "ask", "deny", "pattern", "except", "path", "read", "write", "syslog",
    "git", "files", "containers", "cluster", "infra", "databases",
    "colour", "true", "null", "on", "yes", "1", "~", "<<", "a b", "a-b", "_x", "Rules", "rules ",
    "'rules'", '"rules"', "? rules", "&k rules", "!!str rules", "x" * 130,
]  # fmt: skip
ALPHABET = list(" -?:,[]{}#&*!|>'\"%@`~.0123456789abxyzTtFfNnYyeE_+=<\\/é日")
UNREAD = list("\t\u00a0\ufeff\r\x85\u2028\x00\x7f")  # characters load_plain does not read
SNIPPETS = [
    " ", "  ", "\n", "\n\n", "- ", "-", ": ", ":", "#", " #", " # c", "'", '"', "[", "]", "{", "}",
    ", ", ",", "&a ", "*a", "!", "!!str ", "!x ", "\t", "\r", "\r\n", "\ufeff", "---\n", "...\n",
    "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "\\", "? ", "|\n", ">\n", "<<: ", "~", "0", "1_0", ".5",
    "yes", "null", "true", "x", "é", "\x85", "\u2028",
]  # fmt: skip


def strictly_equal(plain, rt) -> bool:
    """`rt` is what `plain` is, type for type as the policy's validation tells them apart
    (1 == True and ScalarInt(1) == 1 in Python, but not for `type(timeout) is int`)."""
    if plain is None:
        return rt is None
    if type(plain) is bool or type(plain) is int:
        return type(rt) is type(plain) and rt == plain
    if type(plain) is str:
        anchor = getattr(rt, "anchor", None)
        return isinstance(rt, str) and str(rt) == plain and getattr(anchor, "value", None) is None
    if type(plain) is list:
        return isinstance(rt, list) and len(rt) == len(plain) and all(map(strictly_equal, plain, rt))
    if type(plain) is dict:
        return (
            isinstance(rt, dict)
            and len(rt) == len(plain)
            and all(strictly_equal(a, b) for a, b in zip(plain, rt))
            and all(strictly_equal(plain[k], rt[k]) for k in plain)
        )
    return False


def tally(what: str) -> None:
    """Count it in --hypothesis-show-statistics (and nowhere outside hypothesis's tests)."""
    try:
        event(what)
    except InvalidArgument:
        pass


def assert_same_data(text: str) -> None:
    try:
        plain = load_plain(text)
    except NotSure:
        tally("load_plain is not sure")
        return
    tally("load_plain reads it")
    try:
        rt = load_roundtrip(PATH, text)
    except PolicyError as e:
        raise AssertionError(f"load_plain read {text!r} as {plain!r}; the round-trip loader: {e}") from None
    assert strictly_equal(plain, rt), f"load_plain read {text!r} as {plain!r}; the round-trip loader as {rt!r}"


def layer_or_error(text: str):
    try:
        return policy.parse_layer("user", PATH, text)
    except PolicyError as e:
        return ("PolicyError", str(e), e.line, e.key)
    except Exception as e:  # noqa: BLE001 - the same crash either way is no difference to report here
        return (type(e).__name__, str(e))


def roundtrip_only(text: str):
    def not_sure(text):
        raise NotSure("turned off by the test")

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(yamlio, "load_plain", not_sure)
        return layer_or_error(text)


def assert_equivalent(text: str) -> None:
    assert_same_data(text)
    fast, slow = layer_or_error(text), roundtrip_only(text)
    tally("a layer" if isinstance(slow, policy.Layer) else "an error")
    assert fast == slow, f"{text!r}:\n  with load_plain: {fast!r}\n  round-trip only: {slow!r}"


# --- generated policies ---------------------------------------------------------------------------------


WORDS = ["git", "status", "*", "rm", "-rf", "push", "--force", "npm", "run", "~/.ssh", "*.key", "|", "x", "a1", "é"]


class Writer:
    """Draws a policy's YAML text. A wild writer also draws what load_plain never reads (anchors,
    tags, odd keys and quoting, directives, documents, BOM, CRLF, tabs); a tame one stays mostly
    within what it reads, so that most texts test what it returns, not only that it refuses."""

    def __init__(self, draw, wild: bool):
        self.draw, self.wild = draw, wild

    def one(self, choices):
        return self.draw(st.sampled_from(choices))

    def chance(self, n: int) -> bool:
        """True one time in n."""
        return self.draw(st.integers(1, n)) == 1

    def quoted(self, text: str) -> str:
        """`text` as a YAML scalar: plain (as it is, valid YAML or not), single- or double-quoted
        (escaped as YAML wants, or now and then not, or with escapes load_plain does not read)."""
        style = self.one(["plain"] * 4 + ["single"] * 3 + ["double"] * 2 + ["odd"] * self.wild)
        if style == "plain":
            return text
        if style == "single":
            return "'" + text.replace("'", "''") + "'"
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        if style == "double":
            return '"' + escaped + '"'
        odd = [
            "'" + text + "'",
            '"' + text + '"',
            '"' + escaped.replace("a", "\\x61").replace(" ", "\\t") + '"',
            '"' + escaped.replace("/", "\\/").replace("e", "\\u00e9") + '"',
            "'" + text,
            '"' + text + "\\",
        ]
        return self.one(odd)

    def scalar(self) -> str:
        kind = self.draw(st.integers(0, 29))
        if kind < 15:  # a pattern as people write them
            text = " ".join(self.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
        elif kind < 22:
            text = self.one(TRICKY)
        elif kind < 29 or not self.wild:
            text = self.draw(st.one_of(st.text(alphabet=ALPHABET, max_size=8), st.integers(-10, 5000).map(str)))
        else:
            text = self.draw(st.text(max_size=6))
        node = self.quoted(text)
        if not self.wild or not self.chance(12):
            return node
        decoration = self.one(["&a ", "*a", "!!str ", "!!int ", "!custom ", "! ", "&b "])
        return "*a" if decoration == "*a" else decoration + node

    def key(self, usual: list[str]) -> str:
        return self.one(KEY_WORDS) if self.wild and self.chance(6) else self.one(usual)

    def setting(self, key: str) -> str:
        choices = {
            "default": ["allow", "ask", "deny", "maybe", "Ask", "yes"],
            "timeout": ["300", "1", "3600", "3601", "0", "030", "1_000", "0x1F", "true", "1.5", "'300'", "-1", "+30"],
            "mode": ["audit", "enforce", "off"],
            "approve": ["tty", "both", "remote", "on"],
            "confirm": ["key", "word", "yes"],
            "syslog": ["true", "false", "yes", "no", "/dev/log", "'/dev/log'", "dev/log", "~", "1"],
            "loss": ["ask", "allow"],
        }[key]
        return self.scalar() if self.chance(4) else self.one(choices)

    def patterns(self, entry_key: str) -> Node:
        items = []
        for _ in range(self.draw(st.integers(0, 4))):
            if self.chance(6):
                pairs = [(entry_key, Node("scalar", self.scalar()))]
                if self.draw(st.booleans()):
                    excepts = [Node("scalar", self.scalar()) for _ in range(self.draw(st.integers(0, 2)))]
                    pairs.append(("except", Node("seq", excepts)))
                if self.chance(5):
                    pairs.append((self.key(["path", "pattern", "but"]), Node("scalar", self.scalar())))
                items.append(Node("map", self.draw(st.permutations(pairs))))
            else:
                items.append(Node("scalar", self.scalar()))
        return Node("seq", items)

    def anything(self, depth: int) -> Node:
        kind = self.one(["scalar", "scalar", "map", "seq"] if depth < 3 else ["scalar"])
        if kind == "scalar":
            return Node("scalar", self.scalar())
        count = self.draw(st.integers(0, 3))
        if kind == "seq":
            return Node("seq", [self.anything(depth + 1) for _ in range(count)])
        return Node("map", [(self.key(["a", "b", "rules", "allow"]), self.anything(depth + 1)) for _ in range(count)])

    def value(self, key: str) -> Node:
        if self.chance(10):
            return self.anything(0)
        if key in ("default", "timeout", "mode", "approve", "confirm"):
            return Node("scalar", self.setting(key))
        if key == "rules":
            verdicts = self.draw(st.lists(st.sampled_from(["allow", "ask", "deny"] * 3 + ["permit"]), max_size=4))
            return Node("map", [(v, self.patterns("pattern")) for v in verdicts])
        if key == "audit":
            return Node("map", [(self.key(["syslog"]), Node("scalar", self.setting("syslog")))])
        if key == "loss":
            classes = self.draw(st.lists(st.sampled_from(["git", "files", "containers", "docker"]), max_size=3))
            return Node("map", [(c, Node("scalar", self.setting("loss"))) for c in classes])
        if key == "protect":
            section = []
            for action in self.draw(st.lists(st.sampled_from(["read", "write", "read", "write", "open"]), max_size=2)):
                verdicts = self.draw(st.lists(st.sampled_from(["ask", "deny", "ask", "deny", "allow"]), max_size=2))
                section.append((action, Node("map", [(v, self.patterns("path")) for v in verdicts])))
            return Node("map", section)
        return self.anything(0)

    def comment(self) -> str:
        return self.one(["", "", "", "", " # c", "  #c", " #", "#c"])

    def render(self, node: Node, indent: int) -> list[str]:
        """The lines of a block node at `indent` (a mapping or a sequence)."""
        lines: list[str] = []
        if node.kind == "map":
            for n, (key, value) in enumerate(node.value):
                if n and self.chance(8):
                    lines.append(" " * self.draw(st.integers(0, indent + 2)) + "# comment")
                colon = self.one([":"] * 10 + [" :", ":  "]) if self.wild else self.one([":"] * 5 + [":  "])
                lines += self.tail(" " * indent + key + colon, value, indent)
        else:
            for item in node.value:
                dash = self.one(["-", "-", "-", "- ", "-  "])
                if item.kind == "map" and item.value and self.draw(st.booleans()):  # `- key: value` on its line
                    dash = dash.rstrip(" ") + " " * self.draw(st.integers(1, 3))
                    column = indent + len(dash)
                    inner = self.render(item, column)
                    lines += [" " * indent + dash + inner[0][column:], *inner[1:]]
                else:
                    lines += self.tail(" " * indent + dash, item, indent)
        return lines

    def tail(self, head: str, value: Node, indent: int) -> list[str]:
        """`head` (`key:` or `-`) with its value: on the same line, or below it."""
        space = "" if head.endswith(" ") else " "
        if value.kind == "scalar":
            return [head + space + value.value + self.comment()]
        if not value.value or self.chance(4):  # flow style
            return [head + space + self.flow(value) + self.comment()]
        step = self.one([2, 2, 4, 1, 3])
        if value.kind == "seq" and head.lstrip().endswith(":") and self.chance(3):
            step = 0  # an indentless sequence
        return [head.rstrip(" ") + self.comment()] + self.render(value, indent + step)

    def flow(self, node: Node) -> str:
        if node.kind == "scalar":
            return node.value
        space = self.one(["", " "])
        if node.kind == "seq":
            inner = ("," + space).join(self.flow(n) for n in node.value)
            return "[" + inner + self.one(["", "", "", " "] + [","] * self.wild) + "]"
        colon = lambda: self.one([": ", ": ", ":  "] + [":"] * self.wild)  # noqa: E731
        return "{" + ("," + space).join(f"{k}{colon()}{self.flow(v)}" for k, v in node.value) + "}"

    def policy(self) -> str:
        keys = self.draw(st.lists(st.just(None), max_size=7))
        keys = [self.key(list(policy.KEYS)) for _ in keys]
        if not self.chance(4):
            keys = list(dict.fromkeys(keys))  # mostly without duplicate keys
        top = Node("map", [(k, self.value(k)) for k in keys])
        lines = self.render(top, self.one([0, 0, 0, 0, 2]))
        text = "\n".join(lines) + self.one(["\n", "\n", "", "\n\n", "\n# end\n"])
        wraps = ["yaml11", "yaml12", "start", "end", "second", "bom", "crlf", "tab", "tag"]
        wrap = self.one(["none"] * 12 + wraps) if self.wild else "none"
        return {
            "none": text,
            "yaml11": "%YAML 1.1\n---\n" + text,
            "yaml12": "%YAML 1.2\n---\n" + text,
            "start": "---\n" + text,
            "end": text + "...\n",
            "second": text + "---\ndefault: deny\n",
            "bom": "\ufeff" + text,
            "crlf": text.replace("\n", "\r\n"),
            "tab": text.replace("  ", "\t", 1),
            "tag": "%TAG !e! tag:example.com,2000:\n---\n" + text,
        }[wrap]


class Node:
    """A YAML node to render: a scalar's text, or a mapping (list of pairs), or a sequence."""

    def __init__(self, kind: str, value):
        self.kind, self.value = kind, value


@st.composite
def policies(draw, wild: bool | None = None) -> str:
    return Writer(draw, draw(st.booleans()) if wild is None else wild).policy()


@st.composite
def mutated(draw) -> str:
    text = draw(policies())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "insert", "delete", "line", "indent"]))
        if op == "insert":
            text = text[:at] + draw(st.sampled_from(SNIPPETS)) + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 4)) :]
        else:
            lines = text.split("\n")
            n = draw(st.integers(0, len(lines) - 1))
            if op == "line":
                lines.insert(n, lines[n])
            else:
                lines[n] = " " * draw(st.integers(0, 5)) + lines[n].lstrip(" ")
            text = "\n".join(lines)
    return text


@PROPERTY
@given(text=policies())
def test_a_generated_policy_reads_the_same(text):
    assert_equivalent(text)


@PROPERTY
@given(text=mutated())
def test_a_mutated_policy_reads_the_same(text):
    assert_equivalent(text)


@PROPERTY
@given(text=st.lists(st.sampled_from([*ALPHABET, *UNREAD, "\n", "\n", " ", " ", "ask"]), max_size=60).map("".join))
def test_random_text_reads_the_same(text):
    assert_equivalent(text)


@PROPERTY
@given(value=st.sampled_from(TRICKY), data=st.data())
def test_a_tricky_scalar_reads_the_same_everywhere(value, data):
    node = Writer(data.draw, wild=True).quoted(value)
    for text in (
        f"default: {node}\n",
        f"timeout: {node}\n",
        f"audit:\n  syslog: {node}\n",
        f"rules:\n  deny:\n    - {node}\n",
        f"rules:\n  deny: [{node}]\n",
        f"rules:\n  deny: [{node}, x]\n",
        f"rules: {{deny: [{node}]}}\n",
        f"rules:\n  ask:\n    - pattern: {node}\n      except: [{node}]\n",
        f"protect:\n  read:\n    ask:\n    - {{path: {node}}}\n",
        f"{node}: ask\n",
        f"- {node}\n",
    ):
        assert_equivalent(text)


# --- hand-written cases ---------------------------------------------------------------------------------

CASES = [
    "",
    "\n\n",
    "# only a comment\n",
    "default: ask\ntimeout: 300\n",
    "default: ask # why\ntimeout: 300#no comment\n",
    "timeout: 030\n",
    "timeout: 0x1F\n",
    "timeout: 1_000\n",
    "timeout: &t 300\n",
    "timeout: !!int 300\n",
    "timeout: !!str 300\n",
    "timeout: 300.0\n",
    "timeout: '300'\n",
    "timeout: 0\n",
    "timeout: +300\n",
    "audit:\n  syslog: true\n",
    "audit:\n  syslog: &s true\n",
    "audit:\n  syslog: yes\n",
    "audit:\n  syslog: on\n",
    "audit: {syslog: '/dev/log'}\n",
    "default: on\n",
    "default: &d ask\n",
    "default: *d\n",
    "default: &d ask\nmode: *d\n",
    "x: &a [a, *a]\n",
    "x: &a\n  - *a\n",
    "default: !custom ask\n",
    "default: ! ask\n",
    'default: ! "ask"\n',
    "default: !<tag:yaml.org,2002:str> ask\n",
    "%YAML 1.1\n---\ndefault: ask\naudit: {syslog: yes}\n",
    "%YAML 1.2\n---\ndefault: ask\n",
    "---\ndefault: ask\n",
    "default: ask\n...\n",
    "default: ask\n---\ndefault: deny\n",
    "default: ask\ndefault: deny\n",
    "rules:\n  allow: [a]\n  allow: [b]\n",
    "<<: {default: ask}\n",
    "base: &b {default: ask}\n<<: *b\n",
    "? default\n: ask\n",
    "? [a]\n: b\n",
    '"default": ask\n',
    "'default': ask\n",
    "default : ask\n",
    "\ufeffdefault: ask\n",
    "default: ask\r\ntimeout: 30\r\n",
    "default: ask\rtimeout: 30\r",
    "default:\task\n",
    "rules:\n\tallow: [a]\n",
    "default: ask\x85timeout: 30\n",
    "default: a\u2028sk\n",
    "rules:\n  allow:\n    - git status *\n    - 'npm run build *'\n    - \"make *\"\n",
    "rules:\n  allow:\n  - git status *\n  deny:\n  - rm *\n",
    "rules:\n  allow:\n  - a\n  k y\n",
    "rules:\n  allow:\n  - a\n - b\n",
    "rules:\n  allow:\n    - a\n   - b\n",
    "rules:\n  allow:\n    - a\n      b\n",
    "rules:\n  allow:\n    - a\n      # comment\n    - b\n",
    "rules:\n  allow:\n    - 'a'\n      b\n",
    "rules:\n  allow:\n    - [a]\n      b\n",
    "rules:\n  allow:\n    - 'a\n      b'\n",
    "rules:\n  allow:\n    - \"a\n      b\"\n",
    "rules:\n  allow: [a,\n    b]\n",
    "rules:\n  allow: [a, b,]\n",
    "rules:\n  allow: [a, , b]\n",
    "rules:\n  allow: [a: b]\n",
    "rules:\n  allow: [a:b, c]\n",
    "rules:\n  allow: [a:, c]\n",
    "rules:\n  allow: [a #b]\n",
    "rules:\n  allow: [a#b]\n",
    "rules:\n  allow: [a] # c\n",
    "rules:\n  allow: [a]#c\n",
    "rules:\n  allow: ['a'#c]\n",
    "rules:\n  allow: ['a' ]\n",
    "rules:\n  allow: [ 'a' , \"b\" ]\n",
    "rules:\n  allow: [[a]]\n",
    "rules:\n  allow: [{a: b}]\n",
    "rules: {allow: [a], deny: [b]}\n",
    "rules: {allow: [a], allow: [b]}\n",
    "rules: {allow:[a]}\n",
    "rules: {allow: }\n",
    "rules: {allow}\n",
    "rules:\n  allow: [\"a\\\\b\", \"a\\\"b\", \"a\\tb\", \"a\\/b\"]\n",
    "rules:\n  allow: ['it''s', 'a''''b', '''']\n",
    "rules:\n  allow: 'a' 'b'\n",
    "rules:\n  allow:\n    - a: b: c\n",
    "rules:\n  ask:\n    - pattern: rm *\n      except: [rm x]\n    - git push *\n",
    "rules:\n  ask:\n    -   pattern: rm *\n        except:\n        - rm x\n",
    "rules:\n  ask:\n    - pattern: rm *\n     except: [rm x]\n",
    "rules:\n  ask:\n    - pattern: rm *\n       except: [rm x]\n",
    "rules:\n  ask:\n    -\n      pattern: rm *\n",
    "rules:\n  ask:\n    - - rm *\n",
    "rules:\n  ask:\n    - pattern: rm *\n    except: [x]\n",
    "rules:\n  allow:\n    - a - b\n    - -x\n    - --\n    - -\n",
    "rules:\n  allow:\n    - ./configure *\n    - .env\n    - 1.5\n    - 2001-12-14\n    - 12 angry men\n",
    "rules:\n  allow:\n    - 'x' # c\n    - \"y\"  #c\n    - z # c\n",
    "rules:\n  allow:\n    - |\n      a\n    - >\n      b\n",
    "rules:\n  allow:\n    - *a\n",
    "rules:\n  allow:\n    - &a x\n    - *a\n",
    "rules:\n  allow:\n    - !!str 1\n",
    "rules:\n  allow:\n    - @x\n    - `x\n    - %x\n",
    "rules:\n  allow:\n    - a: b\n",
    "rules:\n  allow:\n    - git: *\n",
    "rules:\n  allow:\n    - git:*\n",
    "rules:\n  allow:\n    - ? x\n",
    "rules:\n  allow:\n    - x ? y\n",
    "rules:\n  allow:\n    - x: \n",
    "rules:\n  allow:\n    - ünïcödé 日本 *\n",
    "rules:\n  allow:\n    - a\u00a0b\n",
    "rules:\n  allow:\n    - \"\\x00\"\n",
    "rules:\n  deny:\n  allow: ~\n",
    "rules:\n  allow: null\n  deny: []\n",
    "rules:\n  allow:\n    -\n    - a\n",
    "rules:\n  allow:\n  -\n",
    "rules:\n    allow:\n  - a\n",
    "rules:\nallow: [a]\n",
    " rules:\n   allow: [a]\n",
    "  default: ask\n timeout: 3\n",
    "default: ask\n  timeout: 3\n",
    "default:\n  ask\n",
    "default: ask\n  more\n",
    "default: 'ask'\n  more\n",
    "- a\n- b\n",
    "just a string\n",
    "'quoted'\n",
    "[a, b]\n",
    "{default: ask}\n",
    "default: ask\n- x\n",
    "default: ask\nx\n",
    "true: ask\n",
    "null: ask\n",
    "1: ask\n",
    "on: ask\n",
    "default:ask\n",
    "default:\n",
    "default:  # comment\n  ask\n",
    "default: #comment\n",
    "loss:\n  containers: allow\n  git: ask\n",
    "loss: {containers: allow, git: yes}\n",
    'protect:\n  read:\n    ask: ["~/.ssh", {path: "*.key", except: ["test-*.key"]}]\n  write:\n    deny: [~/.gnupg]\n',
    "protect:\n  read:\n    ask:\n      - path: ~/.ssh\n        except: ['*.pub']\n",
    "protect:\n  read:\n    ask:\n      - ~root/.ssh\n",
    "mode: audit\napprove: remote\nconfirm: word\n",
    "mode: Audit\n",
    "x" * 1030 + ": y\n",
    "rules:\n  allow: [" + "[" * 60 + "]" * 60 + "]\n",
    "rules:\n" + "".join("  " * i + "- \n" for i in range(1, 80)),
    "a:\n" + "".join(" " * i + "a:\n" for i in range(1, 80)),
    "default: #\n  - 'yes' # c\nloss:  #c\n  files\n\n: \n",  # ruamel: NotImplementedError, overlap in comment
]


@pytest.mark.parametrize("text", CASES)
def test_a_hand_written_case_reads_the_same(text):
    assert_equivalent(text)


@pytest.mark.parametrize(
    "text",
    [
        "%YAML 1.1\n---\ndefault: ask\n",
        "default: &d ask\n",
        "default: !!str ask\n",
        "timeout: 030\n",
        "timeout: 1_000\n",
        "timeout: 0x1F\n",
        "default: ask\ndefault: deny\n",
        "default: ask\n---\ndefault: deny\n",
        "rules: {allow: [a,\n  b]}\n",
        "\ufeffdefault: ask\n",
        "rules:\n\tallow: [a]\n",
        "<<: {default: ask}\n",
        "rules:\n  allow: [1.5]\n",
        "rules:\n  allow: [2001-12-14]\n",
    ],
)
def test_load_plain_is_not_sure_of_what_the_round_trip_loader_reads_otherwise(text):
    with pytest.raises(NotSure):
        load_plain(text)


def test_load_plain_reads_yaml_1_2():
    text = "a: [yes, no, on, off, y, n, true, FALSE, ~, null, 300, 'it''s', \"a\\\\b\"] # c\nb: x #c\n"
    assert load_plain(text) == {
        "a": ["yes", "no", "on", "off", "y", "n", True, False, None, None, 300, "it's", "a\\b"],
        "b": "x",
    }


def test_load_plain_reads_real_policies():
    """The built-in policy, README-style policies and a 10,000-rule one take the fast path."""
    with open(resources.DEFAULT_POLICY, encoding="utf-8") as f:
        assert load_plain(f.read())["default"] == "ask"
    text = "rules:\n  allow:\n" + "".join(f"    - 'tool{i % 50} sub{i} --flag{i} *'\n" for i in range(10_000))
    assert len(load_plain(text)["rules"]["allow"]) == 10_000
    example = textwrap.dedent(policy.__doc__.split("\n\n")[1])  # the module docstring's policy
    assert load_plain(example)["rules"]["deny"] == ["rm -rf *", "curl * | sh"]


@pytest.mark.parametrize("text", ["default: maybe\n", "timeout: 0\n", "rules:\n  deny:\n    - rm *\n    - 4\n", "x: ["])
def test_an_error_comes_from_the_round_trip_loader(text):
    """The same message, line and key as before load_plain: the round-trip loader reads broken files."""
    with pytest.raises(PolicyError) as fast:
        policy.parse_layer("user", PATH, text)
    assert (str(fast.value), fast.value.line, fast.value.key) == roundtrip_only(text)[1:]
    assert fast.value.line is not None


def test_a_file_ruamel_fails_on_is_a_policy_error():
    with pytest.raises(PolicyError, match="the YAML parser failed on it \\(NotImplementedError"):
        policy.parse_layer("user", PATH, "default: #\n  - 'yes' # c\nloss:  #c\n  files\n\n: \n")


def test_the_fast_path_does_not_import_ruamel():
    code = (
        "import sys\n"
        "from gatekeep.core import resources\nfrom gatekeep.judge import policy\n"
        "policy.read_layer('built-in', resources.DEFAULT_POLICY)\n"
        "policy.parse_layer('user', 'p', 'rules:\\n  allow: [\"git status *\"]\\n')\n"
        "assert not [m for m in sys.modules if m.startswith('ruamel') or m in ('re', 'hashlib')], sys.modules\n"
        "policy.parse_layer('user', 'p', 'default: &a ask\\n')\n"
        "assert 'ruamel.yaml' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@PROPERTY
@given(pattern=st.text(alphabet=list(" \t\u2003\x1c*\\:ab"), max_size=10))
def test_the_index_reads_a_pattern_s_first_word_as_compile_rule_does(pattern):
    assert _indexed_word(pattern) == first_word(canonical(pattern))
