"""The shipped data (tools/, shell/, agents/, the default policy) works from the checkout and from a wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gatekeep.core import resources

REPO = Path(__file__).resolve().parent.parent


def test_the_checkout_reads_the_top_level_data_directories():
    assert resources.data_dir("tools") == str(REPO / "tools")
    assert resources.data_dir("shell") == str(REPO / "shell")
    assert resources.data_dir("agents") == str(REPO / "agents")
    assert os.path.isfile(resources.DEFAULT_POLICY)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("gatekeep-*.whl")
    return built


def test_the_wheel_carries_tools_shell_agents_and_the_default_policy(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for directory, pattern in (("tools", "*.toml"), ("shell", "gatekeep.*"), ("agents", "*.js")):
        shipped = {Path(n).name for n in names if n.startswith(f"gatekeep/_data/{directory}/")}
        assert shipped == {p.name for p in (REPO / directory).glob(pattern)}
    assert "gatekeep/default_policy.yaml" in names


@pytest.mark.timeout(300)
def test_an_installed_wheel_runs_without_the_checkout(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    probe = (
        "import gatekeep, gatekeep.core.resources as r, gatekeep.name.knowledge as k;"
        "print(gatekeep.__file__); print(r.data_dir('tools')); print(k.load_table().name(['git', 'commit', '-m', 'x']));"
        "print(k.runs_code(['make', '--ev=x'], False))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    package_file, tools_dir, name, code = out.stdout.splitlines()
    assert code == "make runs code given with --eval"  # tools/ is read from the wheel
    assert package_file.startswith(str(target))
    assert tools_dir == str(target / "gatekeep" / "_data" / "tools")
    assert name == "git commit"
    check = subprocess.run(
        [sys.executable, "-m", "gatekeep", "check", "--", "rm -rf ~"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 1 and "denied" in check.stderr
    hook = subprocess.run(
        [sys.executable, "-m", "gatekeep", "hook", "zsh"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert hook.returncode == 0 and "TRAPDEBUG" in hook.stdout and "__GATEKEEP_COMMAND__" not in hook.stdout


def test_compiled_files_are_written_even_under_pythondontwritebytecode(tmp_path):
    """A container's PYTHONDONTWRITEBYTECODE=1 must not make every check compile gatekeep again."""
    import shutil

    copy = tmp_path / "site"
    shutil.copytree(REPO / "gatekeep", copy / "gatekeep", ignore=shutil.ignore_patterns("__pycache__"))
    for data in ("tools", "shell"):
        shutil.copytree(REPO / data, copy / data)
    env = {"HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONPATH"] = str(copy)
    code = "from gatekeep.main import main; raise SystemExit(main(['check', '--no-prompt', '-q', '--', 'ls']))"
    argv = [sys.executable, "-c", code]  # run in tmp_path: `-c` puts the current directory first in sys.path
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    compiled = {p.name.split(".")[0] for p in (copy / "gatekeep").rglob("__pycache__/*.pyc")}
    assert {"gate", "policy", "normalize", "decide", "audit"} <= compiled, (done.stdout, done.stderr)


def test_user_install_puts_gatekeep_on_path_with_bash_completion(tmp_path):
    """`make user-install`: a link to the virtualenv's gatekeep in BINDIR, and a completion file real
    bash completes `gatekeep au` with; `make user-uninstall` takes both away."""
    import shutil

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    bin_dir = Path(sys.executable).parent  # this environment's gatekeep, not a new virtualenv
    if not (bin_dir / "gatekeep").exists():
        pytest.skip(f"no gatekeep command beside {sys.executable}")
    target, completions = tmp_path / "bin", tmp_path / "completions"
    make = ["make", "-s", "-C", str(REPO), "-o", f"{bin_dir}/gatekeep", f"BIN={bin_dir}"]
    places = [f"BINDIR={target}", f"COMPLETIONS={completions}"]
    env = {**os.environ, "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash"}
    done = subprocess.run([*make, "user-install", *places], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (target / "gatekeep").resolve() == (bin_dir / "gatekeep").resolve()
    assert f"{target} is not on your PATH" in done.stdout
    assert f"'{target}/gatekeep' install --shell bash --path '{target}'" in done.stdout  # SHELL: not zsh
    loader = tmp_path / "bash_completion"
    said = "bash completion needs the bash-completion package"
    assert (said in done.stdout) == (not Path("/usr/share/bash-completion/bash_completion").exists())
    for present in (True, False):  # a missing loader is said, a present one is not
        if present:
            loader.write_text("# the package's loader\n")
        elif loader.exists():
            loader.unlink()
        argv = [*make, "user-install", *places, f"BASH_COMPLETION={loader}"]
        again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert (said in again.stdout) is not present, again.stdout
    script = (
        f"source {completions / 'gatekeep'}; COMP_WORDS=(gatekeep au); COMP_CWORD=1; "
        '_gatekeep_completion gatekeep; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    env["PATH"] = f"{target}:/usr/bin:/bin"
    completed = subprocess.run(["bash", "--norc", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert completed.stdout.split() == ["audit"], completed.stderr
    subprocess.run([*make, "user-uninstall", *places], env=env, check=True, timeout=60)
    assert not (target / "gatekeep").exists() and not (completions / "gatekeep").exists()
