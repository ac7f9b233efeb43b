"""YAML reading and writing through ruamel.yaml's round-trip mode, which keeps
the user's comments, key order and list style when gatekeep edits a policy."""

from __future__ import annotations

import io

from gatekeep.errors import PolicyError

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
    except (ValueError, TypeError, AttributeError, IndexError, KeyError) as e:
        # what the parser raises on input it was not written for is still a file that does not load
        raise PolicyError(path, f"the YAML parser failed on it ({type(e).__name__}: {e})") from None


def dump_roundtrip(data) -> str:
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()
