r"""YAML reading and writing.

Edits go through ruamel.yaml's round-trip mode (load_roundtrip, dump_roundtrip), which keeps
the user's comments, key order and list style when gatekeep edits a policy. Checks read a
policy with load_plain first, and with the round-trip loader only when load_plain is not sure.

load_plain reads the YAML a policy is written in (block mappings and sequences, one-line flow
collections, plain, single- and double-quoted scalars, comments) in pure Python, and raises
NotSure at anything else. It does not use ruamel.yaml's C parser (ruamel.yaml.clib): importing
`_ruamel_yaml` imports all of ruamel.yaml (26 ms, more than a cached check takes), and its
scanner is libyaml's, a YAML 1.1 one that differs from ruamel's. load_plain imports nothing
(not even `re`) and reads 10,000 rules in ~10 ms, against 720 ms round-trip: the first check
after an edit of a 10,000-rule policy takes 57 ms instead of 870 ms (1,000 rules: 32 ms, 170 ms).

What it returns is what the round-trip loader returns, compared as plain data: dict, list, str,
int, bool and None; the round-trip loader's CommentedMap, CommentedSeq and quoted-string types
compare equal to them. That is proved only for the shapes it accepts, so it is strict:

- every character is printable (str.isprintable: no tab, CR, BOM, NEL or other line break);
- a block node is a mapping of `KEY:` lines, KEY an ASCII identifier that is not a bool or
  null word, no key twice; or a sequence of `- ` items, an item being a scalar, a one-line
  flow collection, a nested block, or a mapping starting on its line (`- pattern: x`);
- a scalar or flow collection ends on its line: a more indented line after it (a plain
  scalar continued, or an error) is not read; a flow collection is `[a, b]` or `{k: v}`
  without trailing commas, empty entries, `:` pairs in sequences, or comments inside;
- a plain scalar starts with no indicator (`-?:,[]{}#&*!|>'"%@` and backquote: no anchor,
  alias, tag, block scalar or directive is read), holds no `: ` and does not end with `:`,
  and resolves as YAML 1.2 does (ruamel's VersionedResolver): str; true/false in their three
  spellings; null and `~`; an int only as plain decimal digits without a leading zero (the
  round-trip loader gives other ints, and anchored scalars, types of its own); anything that
  could be a float, a timestamp, another int or a merge key is not read;
- a double-quoted scalar has no escape but `\\` and `\"`;
- nothing else: no `---`, `...`, `%YAML`, `?` keys, quoted keys, tabs.

tests/test_yaml_loader.py checks with generated texts that load_plain returns what the
round-trip loader does whenever it returns at all. policy.parse_layer uses its result only
when it also makes a valid layer; otherwise the round-trip loader reads the file again, so
every error message (and its line number) is the round-trip loader's.
"""

from __future__ import annotations

import io

from gatekeep.core.errors import PolicyError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_roundtrip(path: Path, text: str):
    from ruamel.yaml import YAMLError

    try:
        return _yaml().load(text)
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise PolicyError(path, f"invalid YAML: {problem}", line) from None
    except RecursionError:  # the parser recurses once per level: 1,000 `[` or `- ` end here
        raise PolicyError(path, "nested too deeply to read") from None
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, NotImplementedError) as e:
        # what the parser raises on input it was not written for is still a file that does not load
        raise PolicyError(path, f"the YAML parser failed on it ({type(e).__name__}: {e})") from None


def dump_roundtrip(data) -> str:
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()


class NotSure(Exception):
    """load_plain cannot prove it reads the text as the round-trip loader does."""


MAX_DEPTH = 50  # of nested collections load_plain reads
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")  # a plain scalar starting with one is not read
_FLOW_BREAKS = frozenset(",[]{}")
_WORDS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_WORDS.update(dict.fromkeys(("~", "null", "Null", "NULL")))
# every character of every YAML 1.2 float, int and timestamp (whose first characters are -+.0-9):
# a plain scalar starting so that holds another character is a str
_NUMBER_CHARS = frozenset("0123456789_.+-eEinfINFaAboxabcdefABCDEFTtZ: ")


def load_plain(text: str):
    """The policy text as plain data (see the module's docstring), or NotSure."""
    if not text.replace("\n", " ").isprintable():
        raise NotSure("a character load_plain does not read")
    indents: list[int] = []
    contents: list[str] = []
    for line in text.split("\n"):
        content = line.lstrip(" ")
        if content and content[0] != "#":
            indents.append(len(line) - len(content))
            contents.append(content.rstrip(" "))
    if not contents:
        return None
    value, end = _Block(indents, contents).node(0, 0)
    if end != len(contents):
        raise NotSure("a line indented less than the first")
    return value


class _Block:
    """The block structure of the lines that are not blank or comments."""

    def __init__(self, indents: list[int], contents: list[str]) -> None:
        self.indents, self.contents = indents, contents

    def node(self, i: int, depth: int):
        if depth > MAX_DEPTH:
            raise NotSure("nested too deeply")
        content = self.contents[i]
        if content == "-" or content.startswith("- "):
            return self.sequence(i, self.indents[i], depth)
        return self.mapping(i, self.indents[i], depth)

    def mapping(self, i: int, indent: int, depth: int) -> tuple[dict, int]:
        indents, contents = self.indents, self.contents
        count = len(contents)
        result: dict = {}
        while i < count and indents[i] == indent:
            content = contents[i]
            colon = content.find(":")
            key = content[:colon]
            if colon <= 0 or not _is_key(key) or key in result:
                raise NotSure("not a `KEY:` line")
            rest = content[colon + 1 :]
            if rest and rest[0] != " ":
                raise NotSure("no space after `KEY:`")
            rest = rest.lstrip(" ")
            i += 1
            if not rest or rest[0] == "#":
                if i < count and indents[i] > indent:
                    value, i = self.node(i, depth + 1)
                elif i < count and indents[i] == indent and _is_item(contents[i]):
                    value, i = self.sequence(i, indent, depth + 1)
                else:
                    value = None
            else:
                value = _inline(rest, depth)
                if i < count and indents[i] > indent:
                    raise NotSure("a value that continues on the next line")
            result[key] = value
        if i < count and indents[i] > indent:
            raise NotSure("a line indented more than its mapping's keys")
        return result, i

    def sequence(self, i: int, indent: int, depth: int) -> tuple[list, int]:
        indents, contents = self.indents, self.contents
        count = len(contents)
        result: list = []
        while i < count and indents[i] == indent:
            content = contents[i]
            if content == "-":
                rest = ""
            elif content[0] == "-" and content[1] == " ":
                rest = content[2:].lstrip(" ")
            else:
                break  # not an item: the mapping around an indentless sequence goes on
            i += 1
            first = rest[:1]
            if first in ("'", '"') and rest.find(first, 1) == len(rest) - 1 and "\\" not in rest:
                value = rest[1:-1]  # one quoted scalar without escapes: most rules are
            elif not rest or first == "#":
                if i < count and indents[i] > indent:
                    value, i = self.node(i, depth + 1)
                else:
                    value = None
                result.append(value)
                continue
            elif _is_key_line(rest):  # `- pattern: x`: a mapping whose keys are in rest's column
                i -= 1
                indents[i], contents[i] = indent + len(content) - len(rest), rest
                value, i = self.mapping(i, indents[i], depth + 1)
                result.append(value)
                continue
            else:
                value = _inline(rest, depth)
            if i < count and indents[i] > indent:
                raise NotSure("an item that continues on the next line")
            result.append(value)
        if i < count and indents[i] > indent:
            raise NotSure("a line indented more than its sequence's items")
        return result, i


def _is_key(key: str) -> bool:
    """An ASCII identifier (`-` allowed after the first character): never another type, an
    indicator or a number; not too long for a simple key (ruamel allows 1,024 characters)."""
    identifier = key[:1] != "-" and key.replace("-", "_").isidentifier()
    return identifier and len(key) <= 128 and key.isascii() and key not in _WORDS


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


def _is_key_line(rest: str) -> bool:
    colon = rest.find(":")
    return colon > 0 and rest[colon + 1 : colon + 2] in ("", " ") and _is_key(rest[:colon])


def _inline(rest: str, depth: int):
    """The scalar or flow collection that is the rest of a line (not blank, no trailing space)."""
    first = rest[0]
    if first == "'":
        value, end = _single(rest, 0)
    elif first == '"':
        value, end = _double(rest, 0)
    elif first in "[{":
        value, end = _flow(rest, 0, depth + 1)
    else:
        return _plain_block(rest)
    tail = rest[end:]
    if tail and not (tail[0] == " " and tail.lstrip(" ")[0] == "#"):
        raise NotSure("something after a quoted scalar or a flow collection")
    return value


def _plain_block(text: str):
    if text[0] in _INDICATORS:
        raise NotSure("a plain scalar starting with an indicator")
    comment = text.find(" #")
    if comment >= 0:
        text = text[:comment].rstrip(" ")
    if ": " in text or text[-1] == ":":
        raise NotSure("a `: ` in a plain scalar")
    return _resolve(text)


def _resolve(text: str):
    """A plain scalar's value, as ruamel's YAML 1.2 resolver and round-trip constructor make it."""
    first = text[0]
    if first in "~nNtTfF":
        return _WORDS.get(text, text)
    if first in "-+.0123456789":
        if first != "0" and text.isdigit() and text.isascii() and len(text) <= 18:
            return int(text)
        if set(text) <= _NUMBER_CHARS:
            raise NotSure("a plain scalar that may be a number or a timestamp")
    elif text in ("<<", "="):
        raise NotSure("a merge key or a value key")
    return text


def _single(text: str, start: int) -> tuple[str, int]:
    """A single-quoted scalar starting at `start`, and where it ends."""
    parts = []
    i = start + 1
    while True:
        quote = text.find("'", i)
        if quote < 0:
            raise NotSure("a quoted scalar that goes on to the next line")
        if text[quote + 1 : quote + 2] == "'":
            parts.append(text[i : quote + 1])
            i = quote + 2
        else:
            parts.append(text[i:quote])
            return "".join(parts), quote + 1


def _double(text: str, start: int) -> tuple[str, int]:
    """A double-quoted scalar starting at `start`, and where it ends."""
    parts = []
    i = start + 1
    quote = text.find('"', i)
    while True:
        if quote < 0:
            raise NotSure("a quoted scalar that goes on to the next line")
        escape = text.find("\\", i, quote)
        if escape < 0:
            parts.append(text[i:quote])
            return "".join(parts), quote + 1
        escaped = text[escape + 1 : escape + 2]
        if escaped not in ("\\", '"'):
            raise NotSure("an escape other than \\\\ and \\\"")
        parts.append(text[i:escape])
        parts.append(escaped)
        i = escape + 2
        if i > quote:  # the quote was escaped (`\"`): the next one may end it
            quote = text.find('"', i)


def _flow(text: str, start: int, depth: int) -> tuple[list | dict, int]:
    """A flow sequence or mapping that starts at `start` and ends on the same line."""
    if depth > MAX_DEPTH:
        raise NotSure("nested too deeply")
    mapping = text[start] == "{"
    close = "}" if mapping else "]"
    result: list | dict = {} if mapping else []
    i = _skip_spaces(text, start + 1)
    if text[i : i + 1] == close:
        return result, i + 1
    while True:
        if mapping:
            colon = text.find(":", i)
            key = text[i:colon]
            if colon < 0 or not _is_key(key) or key in result or text[colon + 1 : colon + 2] != " ":
                raise NotSure("not a `KEY: ` in a flow mapping")
            value, i = _flow_node(text, _skip_spaces(text, colon + 1), depth)
            result[key] = value  # type: ignore[index]
        else:
            value, i = _flow_node(text, i, depth)
            result.append(value)  # type: ignore[union-attr]
        i = _skip_spaces(text, i)
        separator = text[i : i + 1]
        if separator == close:
            return result, i + 1
        if separator != ",":
            raise NotSure("a flow collection that goes on to the next line, or a pair in a sequence")
        i = _skip_spaces(text, i + 1)


def _flow_node(text: str, i: int, depth: int):
    first = text[i : i + 1]
    if first == "'":
        return _single(text, i)
    if first == '"':
        return _double(text, i)
    if first in ("[", "{"):
        return _flow(text, i, depth + 1)
    if not first or first in _INDICATORS:
        raise NotSure("an empty entry, or a plain scalar starting with an indicator")
    end = i
    length = len(text)
    while end < length:
        char = text[end]
        if char in _FLOW_BREAKS:
            break
        if char == ":" and text[end + 1 : end + 2] in ("", " ", ",", "[", "]", "{", "}"):
            raise NotSure("a `:` ending a plain scalar in a flow collection")
        if char == "#" and text[end - 1] == " ":
            raise NotSure("a comment in a flow collection")
        end += 1
    return _resolve(text[i:end].rstrip(" ")), end


def _skip_spaces(text: str, i: int) -> int:
    while text[i : i + 1] == " ":
        i += 1
    return i
