"""Wrappers: commands that run another command (`sudo`, `env`, `nice`, `timeout`, `xargs`...).

Each is described by the options it knows, which of them take a value, and
how many words come before the command it runs (`timeout DURATION`). Deny and
ask rules see through every wrapper to a fixed point; allow rules only through
the harmless ones (normalize.py).
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy
from gatekeep.core.records import record

ASSIGNMENT = lazy(r"(?s)([A-Za-z_][A-Za-z_0-9]*)\+?=")


class Wrapper(
    record(
        "Wrapper",
        "value_options flags positionals harmless assignments",
        defaults=(frozenset(), frozenset(), 0, False, False),
    )
):
    """A command that runs another one: how to find the inner command among its words.

    value_options: options whose value is the next word; flags: options known to
    take no value; positionals: words between the options and the command
    (timeout's DURATION); harmless: allow rules see through it; assignments:
    takes NAME=value words before the command (env).
    """

    __slots__ = ()


def _w(value: str = "", flags: str = "", **kw) -> Wrapper:
    return Wrapper(frozenset(value.split()), frozenset(flags.split()), **kw)


WRAPPERS: dict[str, Wrapper] = {
    "sudo": _w(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role "
        "-t --type -T --command-timeout -U --other-user",
        "-A -b -E -H -i -K -k -n -P -S -s -V -v -l -e --preserve-env --login --shell "
        "--non-interactive --stdin --askpass --background --reset-timestamp",
    ),
    "doas": _w("-u -C", "-n -s -L"),
    "env": _w(
        "-u --unset -C --chdir -S --split-string", "-i --ignore-environment -0 --null -v --debug -", assignments=True
    ),
    "command": _w("", "-p"),
    "builtin": _w(),
    "exec": _w("-a", "-c -l"),
    "nohup": _w(harmless=True),
    "nice": _w("-n --adjustment", harmless=True),
    "time": _w("", "-p", harmless=True),
    "timeout": _w(
        "-s --signal -k --kill-after", "--preserve-status --foreground -v --verbose", positionals=1, harmless=True
    ),
    "stdbuf": _w("-i -o -e --input --output --error", harmless=True),
    "setsid": _w("", "-c --ctty -f --fork -w --wait"),
    "ionice": _w("-c --class -n --classdata -p --pid -P --pgid -u --uid", "-t --ignore"),
    "flock": _w(
        "-w --timeout -E --conflict-exit-code",
        "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close --verbose -F --no-fork",
        positionals=1,
    ),
    "watch": _w(
        "-n --interval -q --equexit",
        "-b --beep -e --errexit -g --chgexit -t --no-title -c --color -w --no-wrap -p --precise -d --differences",
    ),
    "parallel": _w(
        "-j --jobs -P --max-procs -S --sshlogin --slf --sshloginfile --joblog -a --arg-file --delay --timeout "
        "--retries -N --max-args -n -L --max-lines -s --max-chars -I --replace --er --extensionreplace --bnr "
        "--basenamereplace --dnr --dirnamereplace --bner --basenameextensionreplace --bnr --seqreplace --slotreplace "
        "--rpl --colsep -C -d --delimiter -E --eof --halt --halt-on-error --results --res --tmpdir --workdir --wd "
        "--basefile --bf --return --transferfile --tf --tagstring --arg-sep --arg-file-sep --itemsep --recstart "
        "--recend --block --block-size --memfree --load --limit --nice --env --ssh --template --shuf --sqlmaster "
        "--sqlworker --sql --termseq --tmux --tmuxpane --profile -J",
        "-k --keep-order -X -m -q --quote --tag --line-buffer --lb --group -u --ungroup --bar --eta --progress "
        "--will-cite --citation -0 --null -v --verbose -t --dry-run --dryrun --no-notice --plus --pipe --pipepart "
        "--trim --xargs -r --no-run-if-empty --keep-going --ctag --colour --color --cleanup --trc --transfer",
    ),
    "pkexec": _w("--user", "--disable-internal-agent"),
    "runuser": _w("-u --user -g --group -G --supp-group -s --shell -w --whitelist-environment", "-l --login -m -p"),
    "chroot": _w("--userspec --groups", "--skip-chdir", positionals=1),
    "unshare": _w(
        "-S --setuid -G --setgid --propagation",
        "-m -u -i -n -p -U -C -T -f --fork -r --map-root-user --mount --uts --ipc --net --pid --user",
    ),
    "systemd-run": _w(
        "-p --property -u --unit --uid --gid -E --setenv --description --slice -M --machine",
        "--user --system --scope -t --pty -P --pipe -q --quiet --wait -G --collect",
    ),
    "strace": _w("-o --output -e -p -s -u -a -b -I -O -P -S -X", "-f -ff -c -C -q -qq -r -t -tt -ttt -T -v -x -y -yy"),
    "ltrace": _w("-o -e -p -s -u -n", "-f -c -C -i -r -S -t -tt -ttt -T"),
    "taskset": _w("", "-a --all-tasks -c --cpu-list", positionals=1),
    "busybox": _w(),
    # zsh's precommand modifiers and `repeat N`, and its `sched TIME CMD` (runs CMD later)
    "noglob": _w(harmless=True),
    "nocorrect": _w(harmless=True),
    "-": _w(harmless=True),
    "repeat": _w(positionals=1),
    "sched": _w("", "-o", positionals=1),
    # more programs that run the command they are given (found by an attacker's review)
    "chrt": _w(
        "-T --sched-runtime -P --sched-period -D --sched-deadline",
        "-a --all-tasks -b --batch -d --deadline "
        "-e --ext -f --fifo -i --idle -o --other -r --rr -R --reset-on-fork -v --verbose",
        positionals=1,
    ),
    "setarch": _w(
        "",
        "-v --verbose -R --addr-no-randomize -F --fdpic-funcptrs -Z --mmap-page-zero -L "
        "--addr-compat-layout -X --read-implies-exec -B --32bit -I --short-inode -S --whole-seconds "
        "-T --sticky-timeouts -3 --3gb --4gb --uname-2.6",
        positionals=1,
    ),
    **dict.fromkeys(("linux32", "linux64", "i386", "x86_64", "uname26"), _w("", "-v -R -F -Z -L -X -B -I -S -T -3")),
    "prlimit": _w("-p --pid -o --output", "--noheadings --raw --verbose"),
    "nsenter": _w(
        "-t --target -S --setuid -G --setgid -w --wd -W --wdns",
        "-a --all -F --no-fork -Z --follow-context "
        "--preserve-credentials -r --root -m --mount -u --uts -i --ipc -n --net -p --pid -U --user -C --cgroup",
    ),
    "setpriv": _w(
        "--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps --bounding-set "
        "--securebits --selinux-label --apparmor-profile --landlock-access --landlock-rule",
        "-d --dump --nnp --no-new-privs --init-groups --keep-groups --clear-groups --reset-env",
    ),
    "numactl": _w("-i --interleave -N --cpunodebind -C --physcpubind -m --membind -p --preferred", "-l --localalloc"),
    "fakeroot": _w("-l --lib --faked -i -s", "-u --unknown-is-real"),
    "faketime": _w("-m -p -f", "", positionals=1),
    "eatmydata": _w(),
    "torsocks": _w("-u -p -a -P", "-i -q -d"),
    "proxychains": _w("-f", "-q"),
    "proxychains4": _w("-f", "-q"),
    "tsocks": _w(),
    "unbuffer": _w("", "-p"),
    "dbus-run-session": _w("--config-file --dbus-daemon"),
    "xvfb-run": _w(
        "-n --server-num -s --server-args -f --auth-file -e --error-file -p --xauth-protocol",
        "-a --auto-servernum -l --listen-tcp",
    ),
    "catchsegv": _w(),
    "valgrind": _w(),
    "systemd-inhibit": _w("--what --who --why --mode"),
    "run0": _w("-u --user -g --group -D --chdir --unit --property --description --slice --setenv --nice"),
    "chpst": _w("-u -U -b -e -n -l -L -m -d -o -p -f -c", "-P -0 -1 -2 -v"),
    "envdir": _w(positionals=1),
    "setuidgid": _w(positionals=1),
    "softlimit": _w("-m -a -d -s -l -f -c -o -p -t -r"),
    "nocache": _w(),
    "xargs": _w(
        "-a --arg-file -d --delimiter -E -I -L --max-lines -n --max-args -P --max-procs -s --max-chars "
        "--process-slot-var",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit",
    ),
}

# Wrappers a command's name sees through (`sudo apt install` is `apt install`): they run the
# command as it is, as someone else, later or more gently. Any other wrapper is named itself
# (`watch df`, `strace ./app`, `chroot /srv /bin/sh`, `flock f cmd`): what it adds changes what
# runs. Deny and ask rules see through every wrapper whatever its name (unwrap_all).
NAMED_THROUGH = frozenset(
    "sudo doas run0 pkexec runuser env command builtin exec nohup nice ionice chrt taskset time timeout "
    "stdbuf unbuffer xargs parallel noglob nocorrect - setsid eatmydata nocache".split()
)

# Shells and wrappers for which a `NAME *` rule would allow anything at all.
BARE = frozenset(WRAPPERS) | {
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "eval",
    "xargs",
    "doas",
    "sudo",
    "ionice",
    "setsid",
    "flock",
    "watch",
    "script",
    "parallel",
    "source",
    ".",
    "su",
    "pkexec",
    "noglob",
    "nocorrect",
    "-",
    "repeat",
    "sched",
    "chrt",
    "setarch",
    "linux32",
    "linux64",
    "prlimit",
    "nsenter",
    "setpriv",
    "numactl",
    "fakeroot",
    "faketime",
    "torsocks",
    "proxychains",
    "proxychains4",
    "unbuffer",
    "dbus-run-session",
    "xvfb-run",
    "valgrind",
    "systemd-inhibit",
    "run0",
    "chpst",
    "envdir",
    "setuidgid",
    "softlimit",
    "sg",
}


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] or word


# Every form of a command is matched against the deny rules, and most forms are most of its words:
# a wrapper's inner command, or each word after a wrapper option gatekeep does not know. So the
# forms' words grow as the square of the command's (`sudo env nice ` 9,000 times took minutes). A
# command whose forms would hold more than FORM_WORDS + FORM_WORDS_PER_WORD x its words is not
# read further: it is denied (normalize.py, decide.py), which is never looser than what trying
# every form would find. A real command stays far below: 3 wrappers of any length, or 200 words
# after an unknown option.
FORM_WORDS = 20_000
FORM_WORDS_PER_WORD = 3


def unwrap_all(argv: list[str]) -> tuple[list[str], list[tuple[str, ...]], list[str], str | None]:
    """Every form of `argv` for deny and ask rules, the innermost command (for its name),
    the wrappers passed through on the way (`["sudo", "watch"]`), and why the forms are not
    all there (None: they are; see FORM_WORDS)."""
    forms: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    chain: list[str] = []
    budget = FORM_WORDS + FORM_WORDS_PER_WORD * len(argv)

    def add(words: list[str]) -> bool:
        """Add the forms of `words`; False when they would pass the budget."""
        nonlocal budget
        variants = [tuple(words), (basename(words[0]), *words[1:])]
        if words[0].startswith("=") and len(words[0]) > 1:  # zsh runs `=rm` as the rm on PATH
            variants.append((basename(words[0][1:]), *words[1:]))
        for form in variants:
            if form not in seen:
                budget -= len(form)
                if budget < 0:
                    return False
                seen.add(form)
                forms.append(form)
        return True

    current = argv
    innermost = argv
    run_by_runner = False
    while current:
        if not add(current):
            return innermost, forms, chain, _too_many(argv)
        if not run_by_runner:
            innermost = current
        wrapper = WRAPPERS.get(basename(current[0]))
        if wrapper is None:
            # a runner (`npx`, `pnpm dlx`, `npm exec`: `runner` in tools/) runs its operands as a
            # command: deny and ask rules see it; the name, and so what a rule must name to allow
            # it, stays the runner's own line
            from gatekeep.name.arity import load_table

            inner = load_table().runner_inner(current) if len(current) > 1 else None
            if not inner:
                break
            run_by_runner, current = True, inner
            continue
        if not run_by_runner:  # (`npx sudo rm`: deny rules see through, the name stays the runner's)
            chain.append(basename(current[0]))
        inner, sure = unwrap(wrapper, current)
        if not sure:
            for start in range(1, len(current)):
                if not current[start].startswith("-") and not add(current[start:]):
                    return innermost, forms, chain, _too_many(argv)
        current = inner
    return innermost, forms, chain, None


def _too_many(argv: list[str]) -> str:
    limit = FORM_WORDS + FORM_WORDS_PER_WORD * len(argv)
    return (
        f"its wrappers and their options give more than {limit:,} words of commands it may run"
        " (wrappers nested deep, or many words after an option gatekeep does not know),"
        " too many to try every deny rule on"
    )


def unwrap(wrapper: Wrapper, argv: list[str]) -> tuple[list[str], bool]:
    """The command inside one wrapper, and whether every option was one gatekeep knows."""
    words = argv[:0:-1]  # a stack, the next word on top: taking a word, or putting back env -S's, costs no copy
    sure = True
    while words:
        word = words[-1]
        if word == "--":
            words.pop()
            break
        if wrapper.assignments and ASSIGNMENT.match(word):
            words.pop()
        elif word.startswith("-") and len(word) > 1:
            words.pop()
            option = word.split("=", 1)[0]
            split = _split_string_option(word, words) if wrapper.assignments else None
            if split is not None:
                # env -S 'cmd args', -S'cmd args', -iS 'cmd': the string is split into the command's words
                words.extend(reversed(split))
            elif option in wrapper.value_options and "=" not in word:
                if words:
                    words.pop()
            elif option not in wrapper.flags and option not in wrapper.value_options:
                sure = _is_short_value_form(word, wrapper) and sure
        else:
            break
    words.reverse()
    skip = min(wrapper.positionals, len(words))
    return words[skip:], sure


def _split_string_option(word: str, rest: list[str]) -> list[str] | None:
    """The words of env's -S/--split-string STRING (taking STRING from the top of the stack `rest`
    when it is the next word)."""
    import shlex

    if word.startswith("--"):
        if word.split("=", 1)[0] not in ("--split-string", "--split", "--spli"):
            return None
        value = word.split("=", 1)[1] if "=" in word else (rest.pop() if rest else "")
    elif "S" in word[1:] and set(word[1 : word.index("S", 1)]) <= set("i0v"):  # -S, -iS, -S'cmd'
        value = word[word.index("S", 1) + 1 :] or (rest.pop() if rest else "")
    else:
        return None
    try:
        return shlex.split(value)  # env -S honours quotes and backslashes, as shlex does
    except ValueError:
        return value.split()


def _is_short_value_form(word: str, wrapper: Wrapper) -> bool:
    """`-uroot`, `-n5`, `-5` (nice): a known short option with its value attached."""
    if word[:2] in wrapper.value_options:
        return True
    return word[1:].isdigit() and "-n" in wrapper.value_options
