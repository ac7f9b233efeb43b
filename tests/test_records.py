"""records.record() must behave as collections.namedtuple does, for everything gatekeep uses."""

from __future__ import annotations

import pickle
from collections import namedtuple

import pytest

from gatekeep.core.records import cached_property, record

FIELDS, DEFAULTS = "value dynamic body", (False, None)
Ours = record("Point", FIELDS, defaults=DEFAULTS)
Theirs = namedtuple("Point", FIELDS, defaults=DEFAULTS)


class Sub(record("Sub", "a b")):
    __slots__ = ()

    def total(self) -> int:
        return self.a + self.b


CALLS = [
    ((1,), {}),
    ((1, True), {}),
    ((1, True, "x"), {}),
    ((), {"value": 1}),
    ((1,), {"body": "x"}),
    ((), {"body": "x", "value": 2, "dynamic": True}),
]


@pytest.mark.parametrize("args,kwargs", CALLS)
def test_construction_matches_namedtuple(args, kwargs):
    ours, theirs = Ours(*args, **kwargs), Theirs(*args, **kwargs)
    assert tuple(ours) == tuple(theirs)
    assert (ours.value, ours.dynamic, ours.body) == (theirs.value, theirs.dynamic, theirs.body)
    assert repr(ours) == repr(theirs)
    assert ours == theirs  # both are tuples
    assert hash(ours) == hash(theirs)


BAD_CALLS = [
    ((), {}),  # value is required
    ((1, 2, 3, 4), {}),  # too many
    ((1,), {"value": 2}),  # twice
    ((1,), {"colour": "red"}),  # unknown
]


@pytest.mark.parametrize("args,kwargs", BAD_CALLS)
def test_bad_construction_is_a_type_error_like_namedtuple(args, kwargs):
    with pytest.raises(TypeError):
        Theirs(*args, **kwargs)
    with pytest.raises(TypeError):
        Ours(*args, **kwargs)


def test_replace_fields_and_defaults():
    point = Ours(1)
    changed = point._replace(body="x", dynamic=True)
    assert changed == Theirs(1)._replace(body="x", dynamic=True)
    assert type(changed) is Ours and point == (1, False, None)
    with pytest.raises(ValueError):
        point._replace(colour="red")
    assert Ours._fields == Theirs._fields
    assert Ours._field_defaults == Theirs._field_defaults


def test_subclasses_keep_their_type_methods_and_immutability():
    s = Sub(2, 3)
    assert s.total() == 5
    assert type(s._replace(a=4)) is Sub and s._replace(a=4).total() == 7
    assert repr(s) == "Sub(a=2, b=3)"
    a, b = s
    assert (a, b) == (2, 3)
    with pytest.raises(AttributeError):
        s.a = 9
    with pytest.raises(AttributeError):
        s.other = 1  # __slots__: no instance dict


def test_pickles_like_a_namedtuple():
    s = Sub(1, [2])
    assert pickle.loads(pickle.dumps(s)) == s
    assert type(pickle.loads(pickle.dumps(s))) is Sub


def test_cached_property_computes_once_per_instance():
    calls = []

    class Thing(record("Thing", "n")):
        @cached_property
        def double(self) -> int:
            calls.append(self.n)
            return self.n * 2

    one, two = Thing(1), Thing(2)
    assert (one.double, one.double, two.double) == (2, 2, 4)
    assert calls == [1, 2]
    assert Thing.double.__doc__ is None and isinstance(Thing.__dict__["double"], cached_property)
