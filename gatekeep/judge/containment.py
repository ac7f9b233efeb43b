"""`sandbox:` in the policy: whether a question may be answered by running the line contained.

    sandbox:
      contain: true              # run contained what would ask only for running code or changing the tree
      network: off               # off: the sandbox's own loopback only; on: the machine's network
      writable: ["~/.cache/pip", "~/.npm"]   # places beyond the working tree a contained line may change

Containment (gatekeep/contain/sandbox.py) runs a line under bubblewrap where it can change only
the working tree (and `writable`), cannot read secrets or gatekeep's files, and, with
`network: off`, reaches no other machine. `contain` is off unless a layer turns it on.

Layers: the system and user layers set each key, the user's counting over the system's, except
that a system (or managed) `contain: false` or `network: off` is a floor the user cannot loosen and the
system's `writable` entries stay. A project can only make it stricter: its `contain: false` and
`network: off` count, its `writable` never does (a repository's file cannot open the user's home
to the code it runs).

`network` has no loopback-only value: bubblewrap shares all of the machine's network or none, and
the machine's own loopback (a dev server on localhost:3000) comes only with all of it. A server
the contained line starts itself is reachable on the sandbox's own loopback.
"""

from __future__ import annotations

import os

from gatekeep.core.errors import PolicyError
from gatekeep.core.records import record
from gatekeep.judge.managed import FLOORS

KEYS = ("contain", "network", "writable")
NETWORKS = ("on", "off")  # loosest first
MAX_WRITABLE = 64


class Sandbox(record("Sandbox", "contain network writable", defaults=(False, "off", ()))):
    """The combined `sandbox:` settings: contain (bool), network ("off" | "on"), writable (paths as
    written, `~` not yet expanded)."""

    __slots__ = ()


def parse(path: str, data: dict, line_of) -> tuple[bool | None, str | None, tuple[str, ...]]:
    """(contain, network, writable) as one file sets them: None (and ()) for what it does not set."""
    section = data.get("sandbox")
    if section is None:
        return None, None, ()
    example = "e.g. {contain: true, network: off, writable: [~/.cache/pip]}"
    if not isinstance(section, dict):
        raise PolicyError(path, f"must be a mapping, {example}", line_of(data, "sandbox"), "sandbox")
    for key in section:
        if key not in KEYS:
            raise PolicyError(path, f"unknown key; expected {', '.join(KEYS)}", line_of(section, key), f"sandbox.{key}")
    contain = section.get("contain")
    if contain is not None and type(contain) is not bool:
        raise PolicyError(path, "must be true or false", line_of(section, "contain"), "sandbox.contain")
    network = section.get("network")
    if network is False:  # YAML 1.1 reads a bare `off` as false and `on` as true
        network = "off"
    elif network is True:
        network = "on"
    if network is not None and network not in NETWORKS:
        raise PolicyError(path, "must be on or off", line_of(section, "network"), "sandbox.network")
    writable = section.get("writable") or []
    if not isinstance(writable, list) or len(writable) > MAX_WRITABLE:
        raise PolicyError(path, f"must be a list of at most {MAX_WRITABLE} paths", line_of(section, "writable"), "sandbox.writable")
    for i, entry in enumerate(writable):
        why = unwritable(entry)
        if why is not None:
            raise PolicyError(path, why, line_of(section, "writable"), f"sandbox.writable[{i}]")
    return contain, None if network is None else str(network), tuple(str(w) for w in writable)


def unwritable(entry) -> str | None:
    """Why `entry` cannot be a writable place of the sandbox, or None: a plain absolute or `~/`
    path, never `/`, the home directory or a place above it."""
    if not isinstance(entry, str) or not entry.strip() or "\0" in entry:
        return "each place must be a non-empty string"
    if not (entry.startswith("/") or entry.startswith("~/")):
        return "a writable place is an absolute path or one starting with ~/"
    if any(c in entry for c in "*?[$`"):
        return "a writable place is a plain path, without globs or variables"
    parts = [p for p in entry.split("/")[1:] if p not in ("", ".")]
    if ".." in parts:
        return "a writable place may not contain `..`"
    if not parts:
        return "the home directory or / cannot be writable: name the cache itself (~/.cache/pip)"
    return None


def combine(layers) -> Sandbox:
    """The layers' settings combined (module docstring); each layer's `sandbox` is parse()'s triple."""
    contain, network, writable = False, "off", []
    contain_floor = network_floor = False
    for layer in layers:
        own_contain, own_network, own_writable = layer.sandbox
        if layer.name == "project":
            contain = contain and own_contain is not False
            network = "off" if own_network == "off" else network
            continue
        if own_contain is not None and not (contain_floor and own_contain):
            contain = own_contain
            contain_floor = contain_floor or (layer.name in FLOORS and not own_contain)
        if own_network is not None and not (network_floor and own_network == "on"):
            network = own_network
            network_floor = network_floor or (layer.name in FLOORS and own_network == "off")
        writable += own_writable
    return Sandbox(contain, network, tuple(dict.fromkeys(writable)))


def expand_place(entry: str, home: str) -> str:
    """A writable entry as an absolute, normalized path."""
    path = home + entry[1:] if entry.startswith("~/") else entry
    return os.path.normpath(path)
