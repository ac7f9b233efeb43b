"""No test, and no fixture shared by a module, sees the real home directory (tests/conftest.py)."""

from __future__ import annotations

import os
import pwd

import pytest

from gatekeep.core.paths import SYSTEM_POLICY, get_paths

REAL_HOME = pwd.getpwuid(os.getuid()).pw_dir


def _where() -> list[str]:
    paths = get_paths()
    return [os.environ["HOME"], paths.user_policy, paths.state_dir, paths.audit_log, paths.system_policy]


@pytest.fixture(scope="module")
def seen_by_a_module_fixture():
    return _where()


def _outside_real_home(places: list[str]) -> bool:
    """None is the real home or under it, and the system policy is not the real one either."""
    home = os.path.realpath(REAL_HOME)
    real = [os.path.realpath(p) for p in places]
    return all(p != home and not p.startswith(home + os.sep) for p in real) and SYSTEM_POLICY not in places


def test_a_module_fixture_sees_a_throw_away_home(seen_by_a_module_fixture):
    assert _outside_real_home(seen_by_a_module_fixture), seen_by_a_module_fixture


def test_a_test_sees_its_own_home(tmp_path, seen_by_a_module_fixture):
    here = _where()
    assert _outside_real_home(here) and all(p.startswith(str(tmp_path)) for p in here), here
    assert here[0] != seen_by_a_module_fixture[0]
