"""Every file gatekeep reads or writes is named here, and only here.

`GATEKEEP_HOME` moves all of them under one directory (the tests use it);
otherwise the user's config and state directories come from platformdirs.
`GATEKEEP_POLICY` names another user policy, `GATEKEEP_SYSTEM_POLICY` another
system policy (default /etc/gatekeep/policy.yaml).
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

SYSTEM_POLICY = Path("/etc/gatekeep/policy.yaml")


class Paths(namedtuple("Paths", "config_dir state_dir user_policy system_policy")):
    """The directories and files gatekeep uses, as found from the environment (all Path)."""

    __slots__ = ()

    @property
    def audit_log(self) -> Path:
        return self.state_dir / "audit.jsonl"

    @property
    def error_log(self) -> Path:
        return self.state_dir / "errors.log"

    @property
    def cache_dir(self) -> Path:
        """Compiled policy and arity tables (cache.py); safe to delete."""
        return self.state_dir / "cache"

    @property
    def trust_dir(self) -> Path:
        """One file per trusted version of a project policy (project.py)."""
        return self.state_dir / "trust"

    @property
    def lock_dir(self) -> Path:
        return self.state_dir / "locks"

    def lock_for(self, path: Path) -> Path:
        """The lock file that guards writes to `path` (one per file, wherever it lives)."""
        import hashlib

        digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
        return self.lock_dir / f"{path.name}.{digest}.lock"


def get_paths() -> Paths:
    home = os.environ.get("GATEKEEP_HOME")
    if home:
        config_dir = Path(home) / "config"
        state_dir = Path(home) / "state"
    else:
        import platformdirs  # only when needed: the hot path usually has GATEKEEP_HOME unset too

        config_dir = Path(platformdirs.user_config_dir("gatekeep"))
        state_dir = Path(platformdirs.user_state_dir("gatekeep"))
    user_policy = Path(os.environ.get("GATEKEEP_POLICY") or config_dir / "policy.yaml")
    system_policy = Path(os.environ.get("GATEKEEP_SYSTEM_POLICY") or SYSTEM_POLICY)
    return Paths(config_dir, state_dir, user_policy, system_policy)
