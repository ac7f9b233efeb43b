"""jsontext reads and writes exactly what json does (jsontext.py), without importing it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatekeep.core import jsontext

SCALARS = st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(), inner, max_size=5)),
    max_leaves=30,
)


def outcome(function, argument):
    """What `function(argument)` gives: ("value", repr) or ("error", type, message)."""
    try:
        return ("value", repr(function(argument)))
    except (ValueError, RecursionError) as e:
        return ("error", type(e).__name__, str(e))


@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_dumps_writes_what_json_dumps_writes(value):
    assert jsontext.dumps(value) == json.dumps(value, ensure_ascii=False)


@settings(max_examples=500, deadline=None)
@given(VALUES, st.sampled_from(["", " ", "\n\t", "\r\n  "]))
def test_loads_reads_what_json_loads_reads(value, space):
    text = space + json.dumps(value, ensure_ascii=space == "") + space
    for data in (text, text.encode("utf-8")):
        assert outcome(jsontext.loads, data) == outcome(json.loads, data)


JSONISH = '{}[]":,0123456789.eE+-tfnaluesrNIy \t\n\r\\\x00\ufeff'


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.binary(max_size=40), st.text(alphabet=JSONISH, max_size=40)))
def test_loads_fails_as_json_loads_fails(data):
    assert outcome(jsontext.loads, data) == outcome(json.loads, data)


@pytest.mark.parametrize(
    "data",
    [
        b'\xef\xbb\xbf{"a": 1}',  # a UTF-8 byte order mark: json.loads(bytes) reads it
        '\ufeff{"a": 1}',  # in a str: json refuses it
        '{"a": 1}'.encode("utf-16"),
        '{"a": 1}'.encode("utf-32-le"),
        b'{"a": "\xed\xa0\x80"}',  # an encoded surrogate: json reads it with surrogatepass
        b'{"a": NaN, "b": -Infinity, "c": 1e400}',
        b'{"a": 1, "a": 2}',
        b'{"a": "tab\there"}',  # a control character in a string: json's strict mode refuses it
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the scanner recurses
        b'{"a": 1} x',
        b"",
        b"   ",
    ],
)
def test_loads_edge_cases_match_json(data):
    assert outcome(jsontext.loads, data) == outcome(json.loads, data)


def run_bare(code: str) -> subprocess.CompletedProcess:
    """`code` after `from gatekeep.core import jsontext`, in an interpreter started as the hooks start it (-I -S)."""
    here = str(Path(jsontext.__file__).parents[2])
    start = f"import sys; sys.path.insert(0, {here!r}); from gatekeep.core import jsontext\n"
    return subprocess.run([sys.executable, "-I", "-S", "-c", start + code], capture_output=True, text=True, timeout=60)


def test_bad_json_without_the_json_package_loaded_is_json_loads_error():
    """The C scanner reports an error through json.decoder, which it only finds already loaded."""
    done = run_bare("try: jsontext.loads(b'{\"a\": 1,')\nexcept ValueError as e: print(type(e).__name__, e)")
    expected = "JSONDecodeError Expecting property name enclosed in double quotes: line 1 column 9 (char 8)"
    assert done.stdout.strip() == expected


def test_neither_imports_json():
    done = run_bare(
        "v = jsontext.loads(b'{\"a\": [1, true, null, \"x\"]}'); jsontext.dumps({'b': v, 'c': (1, 'y')}); "
        "print('json' in sys.modules, 're' in sys.modules)"
    )
    assert done.stdout.split() == ["False", "False"], done.stderr
