"""paths.user_dirs finds the directories platformdirs finds, without importing it (issue 18).

platformdirs stays a test dependency only for this comparison: a user who ran an earlier
gatekeep has their policy where platformdirs put it, and must find it there still.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gatekeep.core.errors import FatalError
from gatekeep.core.paths import get_paths, user_dirs

platformdirs = pytest.importorskip("platformdirs")

# (HOME, XDG_CONFIG_HOME, XDG_STATE_HOME); None: unset
ENVIRONMENTS = [
    ("/home/ana", None, None),
    ("/home/ana/", None, None),
    ("/", None, None),
    ("/home/ana", "/srv/config", "/srv/state"),
    ("/home/ana", "", ""),
    ("/home/ana", "   ", "\t"),
    ("/home/ana", "relative/config", "./state"),
    ("/home/ana", "~/config", "~/state"),
    ("/home/ana", "/srv/config/", "/srv/state//"),
    ("/home/ana with space", None, "/x y"),
]


def _set(monkeypatch, home, config, state):
    for name, value in (("HOME", home), ("XDG_CONFIG_HOME", config), ("XDG_STATE_HOME", state)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)


@pytest.mark.parametrize(("home", "config", "state"), ENVIRONMENTS)
def test_user_dirs_are_platformdirs_dirs(monkeypatch, home, config, state):
    _set(monkeypatch, home, config, state)
    expected = (platformdirs.user_config_dir("gatekeep"), platformdirs.user_state_dir("gatekeep"))
    assert user_dirs() == expected


@pytest.mark.parametrize(("home", "config", "state"), ENVIRONMENTS)
def test_macos_dirs_are_platformdirs_dirs(monkeypatch, home, config, state):
    from platformdirs.macos import MacOS

    _set(monkeypatch, home, config, state)
    monkeypatch.setattr(sys, "platform", "darwin")
    expected = (MacOS("gatekeep").user_config_dir, MacOS("gatekeep").user_state_dir)
    assert user_dirs() == expected


@pytest.mark.parametrize("home", ["", "relative/home", None])
def test_a_home_that_is_not_absolute_is_the_password_databases(monkeypatch, home):
    import pwd

    _set(monkeypatch, home, None, None)
    real_home = pwd.getpwuid(__import__("os").getuid()).pw_dir
    assert user_dirs()[0] == real_home.rstrip("/") + "/.config/gatekeep"
    assert user_dirs() == (platformdirs.user_config_dir("gatekeep"), platformdirs.user_state_dir("gatekeep"))


def test_no_home_at_all_is_a_clear_error(monkeypatch):
    import pwd

    _set(monkeypatch, "relative", None, None)

    def missing(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", missing)
    with pytest.raises(FatalError, match="home directory"):
        user_dirs()


def test_gatekeep_home_moves_everything(monkeypatch, tmp_path):
    monkeypatch.setenv("GATEKEEP_HOME", str(tmp_path))
    paths = get_paths()
    assert paths.config_dir == str(tmp_path / "config") and paths.state_dir == str(tmp_path / "state")


def test_a_check_imports_no_platformdirs(tmp_path):
    """What a user runs (no GATEKEEP_HOME) finds its files without platformdirs' 60 modules;
    once the policy is compiled (the second run), without ruamel or pathlib either."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    code = (
        "import sys; from gatekeep.main import main; main(['check', '--no-prompt', '-q', '--', 'ls'])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'platformdirs', 'pathlib', 'click', 'ruamel'}))"
    )
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True) for _ in "12"]
    cold, warm = (r.stdout.strip() for r in runs)
    assert "platformdirs" not in cold and "click" not in cold, runs
    assert warm == "[]", runs
    assert (tmp_path / ".local/state/gatekeep/cache").is_dir()


@pytest.mark.parametrize("data", [b"", b"abc", "ü\0x".encode(), bytes(range(256)) * 40])
def test_hashing_gives_hashlibs_digest(data):
    import hashlib

    from gatekeep.core.hashing import sha256

    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    grown = sha256()
    grown.update(data)
    assert grown.hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_check_in_a_project_directory_imports_no_hashlib(tmp_path):
    """Trust is looked up by a SHA-256 of the project file: CPython's own module, not OpenSSL's 3 ms."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".gatekeep.yaml").write_text("rules:\n  ask: ['make deploy']\n")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    code = (
        "import sys; from gatekeep.main import main; main(['check', '--no-prompt', '-q', '--', 'ls'])\n"
        "print('hashlib' in sys.modules)"
    )
    runs = [subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path / "repo", capture_output=True,
                           text=True, timeout=60) for _ in "12"]
    assert [r.stdout.strip() for r in runs] == ["False", "False"], runs
