"""Named-tuple classes that are cheap to create, for the records of the hot path.

`collections.namedtuple` compiles a `__new__` from source text for every class
it makes: ~0.25 ms each, and the 17 record types that `gatekeep check` imports
cost it ~0.25x Python's start-up before it reads a single word (issue 6).
`record()` makes the same kind of class, a tuple subclass with named fields,
defaults, `_replace` and `_fields`, from closures instead, in about a fifth of
the time. Instances behave as namedtuple's do (tests/test_records.py compares
them); creating one costs a little more, which a check, making a few dozen,
does not notice.
"""

from __future__ import annotations

from _operator import itemgetter  # operator itself is a Python module over _operator: 0.7 ms more


def record(typename: str, field_names: str, defaults: tuple = ()) -> type:
    """A tuple subclass with the space-separated `field_names`; the last len(defaults) are optional."""
    fields = tuple(field_names.split())
    count = len(fields)
    required = count - len(defaults)
    index = {name: i for i, name in enumerate(fields)}

    def __new__(cls, *args, **kwargs):
        if kwargs or len(args) != count:
            args = _bind(args, kwargs)
        return tuple.__new__(cls, args)

    def _bind(args: tuple, kwargs: dict) -> tuple:
        if len(args) > count:
            raise TypeError(f"{typename}() takes {count} arguments but {len(args)} were given")
        values = list(args) + [_MISSING] * (count - len(args))
        for name, value in kwargs.items():
            if name not in index:
                raise TypeError(f"{typename}() got an unexpected keyword argument {name!r}")
            if values[index[name]] is not _MISSING:
                raise TypeError(f"{typename}() got multiple values for argument {name!r}")
            values[index[name]] = value
        for i in range(count):
            if values[i] is _MISSING:
                if i < required:
                    raise TypeError(f"{typename}() missing required argument {fields[i]!r}")
                values[i] = defaults[i - required]
        return tuple(values)

    def _replace(self, **changes):
        values = list(self)
        for name, value in changes.items():
            if name not in index:
                raise ValueError(f"got unexpected field name {name!r}")
            values[index[name]] = value
        return tuple.__new__(type(self), values)

    def __repr__(self) -> str:
        inside = ", ".join(f"{name}={value!r}" for name, value in zip(fields, self, strict=True))
        return f"{type(self).__name__}({inside})"

    def __getnewargs__(self) -> tuple:  # pickling, as namedtuple does it
        return tuple(self)

    namespace = {
        "__slots__": (),
        "__doc__": f"{typename}({', '.join(fields)})",
        "_fields": fields,
        "_field_defaults": dict(zip(fields[required:], defaults, strict=True)),
        "__new__": __new__,
        "_replace": _replace,
        "__repr__": __repr__,
        "__getnewargs__": __getnewargs__,
        **{name: property(itemgetter(i), doc=f"Alias for field number {i}") for i, name in enumerate(fields)},
    }
    return type(typename, (tuple,), namespace)


_MISSING = object()


class cached_property:  # lower case: it stands for the functools original
    """functools.cached_property, without importing functools (and with it collections) on the hot path.

    A non-data descriptor: the first access computes the value and stores it in
    the instance's __dict__, which later accesses find first.
    """

    def __init__(self, function) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value
