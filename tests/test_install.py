"""`gatekeep install`: a marked block at the end of the rc file, never twice, removable."""

from __future__ import annotations

import subprocess

import pytest

from gatekeep.main import main


@pytest.mark.parametrize("shell,rc", [("bash", ".bashrc"), ("zsh", ".zshrc")])
def test_install_is_idempotent_and_removable(isolated_home, capsys, shell, rc):
    path = isolated_home / rc
    path.write_text("# mine\nalias ll='ls -l'\n")
    assert main(["install", "--shell", shell]) == 0
    assert main(["install", "--shell", shell]) == 0
    text = path.read_text()
    assert text.startswith("# mine\nalias ll='ls -l'\n")
    assert text.count("# >>> gatekeep >>>") == 1 and text.rstrip().endswith("# <<< gatekeep <<<")
    assert f"-I -m gatekeep hook {shell}" in text
    assert main(["install", "--shell", shell, "--remove"]) == 0
    assert path.read_text() == "# mine\nalias ll='ls -l'\n"
    assert main(["install", "--shell", shell, "--remove"]) == 0
    assert "no gatekeep block" in capsys.readouterr().out


def test_zsh_install_follows_zdotdir(isolated_home, monkeypatch, tmp_path):
    monkeypatch.setenv("ZDOTDIR", str(tmp_path / "zdot"))
    assert main(["install", "--shell", "zsh"]) == 0
    assert (tmp_path / "zdot" / ".zshrc").exists() and not (isolated_home / ".zshrc").exists()


def test_the_installed_block_loads_the_hook_in_interactive_shells_only(isolated_home):
    main(["install", "--shell", "bash"])

    def loaded(*flags: str) -> str:
        script = f"source {isolated_home / '.bashrc'}; echo loaded=${{__gatekeep_loaded-no}}"
        return subprocess.run(["bash", *flags, "-c", script], capture_output=True, text=True, timeout=60).stdout

    assert "loaded=no" in loaded()
    assert "loaded=1" in loaded("-i")
