"""Real interactive bash and zsh, with gatekeep's hook, driven through a pseudo-terminal.

A Shell starts with an rc file that loads the hook text it is given, in a home of
its own (HOME, and ZDOTDIR for zsh), and works in HOME/work. The tests that use it
check what reached the disk.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pexpect
import pytest

from gatekeep.ask import keys as answer_keys

PROMPT = "GK-READY> "
QUESTION = "means deny)"  # the last line of the question follows: its choices, then " > "
PAUSE = answer_keys.AFTER_TYPING + 0.2  # a key counts as an answer only after a pause (gatekeep/ask/keys.py)


def press_answer(child: pexpect.spawn, keys: str) -> None:
    """Answer the question on screen as a person does: each key pressed on its own, after a pause
    (`a` and `n` need `y` after them to write the policy)."""
    for key in keys:
        time.sleep(PAUSE)
        child.send(key)


def need_shell(name: str) -> str:
    """The path of the shell `name`. A test that needs a shell this machine lacks is skipped, with the
    reason printed (pytest -ra), except zsh when GATEKEEP_REQUIRE_ZSH=1: CI installs zsh and sets
    it, so there a missing zsh fails the test instead of quietly skipping the zsh half of the suite."""
    path = shutil.which(name)
    if path is None:
        if name == "zsh" and os.environ.get("GATEKEEP_REQUIRE_ZSH") == "1":
            pytest.fail("GATEKEEP_REQUIRE_ZSH=1, but zsh is not on PATH: install zsh", pytrace=False)
        pytest.skip(f"{name} is not installed; install it to run the {name} tests")
    return path


def hook_text(shell: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "gatekeep", "hook", shell], capture_output=True, text=True, check=True
    ).stdout


class Shell:
    def __init__(self, shell: str, home: Path, hook: str, extra_rc: str = "", before_hook: str = "", env=None):
        need_shell(shell)
        self.home = home
        self.work = home / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        (home / "hook.sh").write_text(hook)
        rc = f"{before_hook}\nPS1='{PROMPT}'\nsource {home / 'hook.sh'}\n{extra_rc}\ncd {self.work}\n"
        extra_env = env or {}
        env = {k: v for k, v in os.environ.items() if not k.startswith(("BASH_FUNC", "PROMPT_COMMAND", "PS0"))}
        env.update(HOME=str(home), TERM="dumb", HISTFILE=str(home / "history"), **extra_env)
        if shell == "bash":
            (home / "bashrc").write_text(rc)
            argv = ["bash", "--noprofile", "--rcfile", str(home / "bashrc"), "-i"]
        else:
            (home / ".zshrc").write_text(rc)
            env["ZDOTDIR"] = str(home)
            argv = ["zsh", "-i"]
        self.name = shell
        self.child = pexpect.spawn(argv[0], argv[1:], env=env, encoding="utf-8", timeout=20, cwd=str(home))
        self.child.expect_exact(PROMPT)

    def run(self, line: str) -> str:
        """Send a line that must not prompt; return what it printed."""
        self.child.sendline(line)
        index = self.child.expect_exact([PROMPT, QUESTION])
        output = self.child.before
        assert index == 0, f"unexpected question for {line!r}: {output}"
        return output

    def ask(self, line: str, keys: str | None) -> str:
        """Send a line that must prompt; answer with `keys` (None: let it time out)."""
        self.child.sendline(line)
        self.child.expect_exact(QUESTION)
        question = self.child.before
        self.child.expect_exact(" > ")
        question += QUESTION + self.child.before
        self.question = question.split("gatekeep: this line needs your approval", 1)[-1]  # not the echo
        if keys is not None:
            press_answer(self.child, keys)
        self.child.expect_exact(PROMPT)
        return self.child.before

    def exists(self, name: str) -> bool:
        return (self.work / name).exists()

    def close(self) -> None:
        self.child.close(force=True)

    def type(self, line: str, answer: str = "d") -> tuple[str, bool]:
        """Send a line; if it asks, answer with `answer`. Returns what it printed and whether it asked."""
        self.child.sendline(line)
        index = self.child.expect_exact([PROMPT, QUESTION])
        output = self.child.before
        if index == 1:
            press_answer(self.child, answer)
            self.child.expect_exact(PROMPT)
            output += self.child.before
        return output, index == 1


class Terminal:
    """A pseudo-terminal: gatekeep asks on `path`; the test presses keys like a person on the
    other side, and everything gatekeep writes is collected (a reader keeps the buffer empty)."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)
        self.shown = b""
        self.reader = threading.Thread(target=self._collect, daemon=True)
        self.reader.start()

    def _collect(self):
        with contextlib.suppress(OSError):
            while data := os.read(self.master, 65536):
                self.shown += data

    def output(self) -> str:
        time.sleep(0.1)
        return self.shown.decode("utf-8", "replace")

    def press(self, *presses: bytes, first: float = PAUSE, gap: float = PAUSE, on_question=True) -> threading.Thread:
        """Each of `presses` written at once, the first `first` s after the question appears (or
        after now: on_question=False), the others `gap` s apart."""

        def send():
            while on_question and b"> " not in self.shown:
                time.sleep(0.01)
            for i, pressed in enumerate(presses):
                time.sleep(first if i == 0 else gap)
                os.write(self.master, pressed)

        thread = threading.Thread(target=send, daemon=True)
        thread.start()
        return thread

    def type(self, text: bytes, first: float = 0.3, gap: float = 0.08) -> threading.Thread:
        """Type `text` one key at a time, at a typist's pace."""
        return self.press(*(bytes([b]) for b in text), first=first, gap=gap)

    def close(self):
        os.close(self.slave)  # the reader's next read fails (EIO): it must end before the master's
        self.reader.join(timeout=5)  # number can be reused by the next test's terminal
        os.close(self.master)
