"""Where the shipped data lives, from a checkout and from an installed wheel.

The wheel carries the top-level data directories (`tools/`...) inside the package
(`gatekeep/_data/`, see pyproject.toml); a checkout (and an editable install)
reads it from the repository root beside the package. Paths are str (paths.py).
"""

from __future__ import annotations

import os

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # gatekeep/, above core/
DEFAULT_POLICY = os.path.join(PACKAGE_DIR, "default_policy.yaml")


def data_dir(name: str) -> str:
    for candidate in (os.path.join(PACKAGE_DIR, "_data", name), os.path.join(os.path.dirname(PACKAGE_DIR), name)):
        if os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(f"gatekeep's {name}/ data is missing; reinstall gatekeep")
