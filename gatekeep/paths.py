"""Every file gatekeep reads or writes is named here, and only here.

`GATEKEEP_HOME` moves all of them under one directory (the tests use it);
otherwise the user's config and state directories come from platformdirs.
`GATEKEEP_POLICY` names another user policy, `GATEKEEP_SYSTEM_POLICY` another
system policy (default /etc/gatekeep/policy.yaml).

Paths are plain strings: `gatekeep check` runs before every line, and pathlib
(which imports urllib.parse, ipaddress and re) costs it ~0.25x Python's
start-up. Commands off that path wrap them in `Path` where they need one.
"""

from __future__ import annotations

import os

from gatekeep.records import record

SYSTEM_POLICY = "/etc/gatekeep/policy.yaml"


class Paths(record("Paths", "config_dir state_dir user_policy system_policy")):
    """The directories and files gatekeep uses, as found from the environment (all str)."""

    __slots__ = ()

    @property
    def audit_log(self) -> str:
        return os.path.join(self.state_dir, "audit.jsonl")

    @property
    def error_log(self) -> str:
        return os.path.join(self.state_dir, "errors.log")

    @property
    def cache_dir(self) -> str:
        """Compiled policy and arity tables (cache.py); safe to delete."""
        return os.path.join(self.state_dir, "cache")

    @property
    def trust_dir(self) -> str:
        """One file per trusted version of a project policy (project.py)."""
        return os.path.join(self.state_dir, "trust")

    @property
    def lock_dir(self) -> str:
        return os.path.join(self.state_dir, "locks")

    def lock_for(self, path: str | os.PathLike) -> str:
        """The lock file that guards writes to `path` (one per file, wherever it lives)."""
        import hashlib

        digest = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:16]
        return os.path.join(self.lock_dir, f"{os.path.basename(path)}.{digest}.lock")


def get_paths() -> Paths:
    home = os.environ.get("GATEKEEP_HOME")
    if home:
        config_dir = os.path.join(home, "config")
        state_dir = os.path.join(home, "state")
    else:
        import platformdirs  # only when needed: the hot path usually has GATEKEEP_HOME unset too

        config_dir = platformdirs.user_config_dir("gatekeep")
        state_dir = platformdirs.user_state_dir("gatekeep")
    user_policy = os.environ.get("GATEKEEP_POLICY") or os.path.join(config_dir, "policy.yaml")
    system_policy = os.environ.get("GATEKEEP_SYSTEM_POLICY") or SYSTEM_POLICY
    return Paths(config_dir, state_dir, user_policy, system_policy)
