"""Where the shipped data lives, from a checkout and from an installed wheel.

The wheel carries the top-level `arity/` directory inside the package
(`gatekeep/_data/`, see pyproject.toml); a checkout (and an editable install)
reads it from the repository root beside the package.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_POLICY = PACKAGE_DIR / "default_policy.yaml"


def data_dir(name: str) -> Path:
    for candidate in (PACKAGE_DIR / "_data" / name, PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gatekeep's {name}/ data is missing; reinstall gatekeep")
