"""Variables that change what a command runs, or how: data, read by normalize.py.

A command prefixed by assignments (`PORT=3333 pnpm start`, `env NODE_ENV=test npm test`, `sudo
X=1 cmd`) is judged as the command it prefixes, as a person reads it, unless a variable it sets
decides which program runs, what code that program loads or runs, or where it finds the settings
that do (a configuration file can name programs to run). Then no allow rule may allow it: it asks,
whatever the posture. Each entry below says which of those it is, from the program's own
documentation; a name ending in `*` stands for every name it starts (`LD_*`).

A variable missing here is one more that a line may set unasked for the command it prefixes:
what the command does with it is the command's own business, as with any argument. A line that
sets one of these for the rest of the session (`export PATH=…`) meets the built-in ask rules.
"""

from __future__ import annotations

# which program runs, or where the shell looks for it
_PROGRAMS = (
    "PATH CDPATH SHELL EDITOR VISUAL PAGER MANPAGER BROWSER SSH_ASKPASS SUDO_ASKPASS TERMINAL "
    # the programs gzip's, xz's and zstd's scripts run (zgrep, zdiff, zcmp: ${GREP-grep}), man's
    # options (-P PAGER), bat's pager
    "GREP EGREP FGREP DIFF CMP ZCAT MANOPT MANROFFOPT BAT_PAGER"
)
# the options and key bindings a program reads from the environment, which can run commands
# (less's `!`, a lesskey file, tar's --to-command and --use-compress-program, more's)
_OPTIONS = "LESS LESSKEY LESSKEYIN LESSKEY_CONTENT LESSKEY_SYSTEM MORE TAR_OPTIONS BAT_CONFIG_PATH"
# what the shell itself runs or expands, at start-up or at each prompt
_SHELL = "BASH_ENV ENV IFS PS1 PS2 PS3 PS4 PROMPT_COMMAND SHELLOPTS BASHOPTS ZDOTDIR HISTFILE INPUTRC"
# where programs find the settings that can name programs (~/.gitconfig, ~/.npmrc, ~/.curlrc…)
_SETTINGS = (
    "HOME XDG_CONFIG_HOME XDG_CONFIG_DIRS XDG_DATA_HOME XDG_DATA_DIRS CURL_HOME WGETRC GNUPGHOME "
    # a kubeconfig's exec plugin, aws's credential_process, terraform's dev_overrides, an rclone
    # remote's ssh command, a docker credential helper: files that name programs the tool runs
    "KUBECONFIG AWS_CONFIG_FILE TF_CLI_CONFIG_FILE RCLONE_CONFIG DOCKER_CONFIG CLOUDSDK_CONFIG"
)
# what the dynamic linker loads into every program
_LINKER = "LD_* DYLD_*"
# code an interpreter loads or runs before the program
_INTERPRETERS = (
    "PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTHONINSPECT PYTHONWARNINGS PYTHONBREAKPOINT PYTHONUSERBASE PYTHONEXECUTABLE "
    "NODE_OPTIONS NODE_PATH PERL5LIB PERLLIB PERL5OPT PERL5DB RUBYOPT RUBYLIB "
    "JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH LESSOPEN LESSCLOSE"
)
# the programs build tools run (compilers, wrappers, runners, linker flags) and their settings
_BUILDS = (
    "CC CXX CPP LD AR AS MAKE MAKEFLAGS MFLAGS RUSTC RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER RUSTDOC RUSTFLAGS "
    "RUSTDOCFLAGS CARGO_* GOFLAGS GOTOOLCHAIN CGO_CFLAGS CGO_LDFLAGS COMPILER_PATH GCC_EXEC_PREFIX"
)
# git: GIT_SSH_COMMAND, GIT_PAGER, GIT_EDITOR, GIT_EXTERNAL_DIFF, GIT_CONFIG_*, GIT_DIR… (all but
# who wrote a commit: GIT_AUTHOR_* and GIT_COMMITTER_* are names, addresses and dates)
_GIT = "GIT_*"
# package managers: the shell their scripts run in, where they install from
_PACKAGES = "npm_config_* NPM_CONFIG_* YARN_* PIP_* UV_* POETRY_* PNPM_*"

_NAMES = " ".join((_PROGRAMS, _OPTIONS, _SHELL, _SETTINGS, _LINKER, _INTERPRETERS, _BUILDS, _GIT, _PACKAGES)).split()
_EXACT = frozenset(n for n in _NAMES if not n.endswith("*"))
_PREFIXES = tuple(n[:-1] for n in _NAMES if n.endswith("*"))
_GIT_PEOPLE = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME")
_GIT_PEOPLE += ("GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE")


def changes_what_runs(name: str) -> bool:
    """Whether setting `name` for a command can change which program runs, or what code runs."""
    if name in _GIT_PEOPLE:
        return False
    return name in _EXACT or name.startswith(_PREFIXES)


# Of those, the ones whose value only names files and directories (search paths, libraries,
# start-up files), options that load them, or modules imported by name (PYTHONWARNINGS' categories,
# PYTHONBREAKPOINT's callable): in the sandbox, where what they name is held as the
# command is, they may be set (judge/decide.py). Not the ones whose value is a command line
# (GIT_SSH_COMMAND, PAGER, EDITOR, GIT_EXTERNAL_DIFF, LESSOPEN…): what it would run is text
# gatekeep does not judge, which may lose work in the tree.
_NAMES_FILES = frozenset(
    "PATH CDPATH PYTHONPATH PYTHONHOME PYTHONUSERBASE PYTHONWARNINGS PYTHONBREAKPOINT NODE_PATH NODE_OPTIONS PERL5LIB "
    "PERLLIB RUBYLIB CLASSPATH COMPILER_PATH GCC_EXEC_PREFIX KUBECONFIG AWS_CONFIG_FILE TF_CLI_CONFIG_FILE "
    "RCLONE_CONFIG DOCKER_CONFIG CLOUDSDK_CONFIG "
    "LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV ZDOTDIR HISTFILE INPUTRC GIT_DIR GIT_WORK_TREE".split()
)


def names_files_only(name: str) -> bool:
    """Whether `name` changes what runs only through the files its value names (_NAMES_FILES, DYLD_*)."""
    return name in _NAMES_FILES or name.startswith("DYLD_")
