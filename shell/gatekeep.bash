# gatekeep hook for bash 4.4 or newer. Install with `gatekeep install --shell bash`, or at the END of ~/.bashrc:
#     eval "$(gatekeep hook bash)"
# (install writes a guarded form: should gatekeep be gone, a new shell loads a fallback
# that blocks every line and says why, instead of starting ungated: see hook.py rc_lines).
#
# How it gates: bash expands PS0 once per line, after reading the line and
# adding it to history, before any part of it runs. A command substitution in
# PS0 reads the line back from history and asks gatekeep. If gatekeep says no
# (or cannot answer), it sends SIGINT to the shell, and an interactive bash
# then drops the whole line: lists, loops, subshells and pipelines alike.
# A DEBUG trap cannot do this (it skips one simple command at a time), so the
# DEBUG trap and PROMPT_COMMAND stay free for bash-preexec, starship, atuin...
#
# What must hold for that, restored before every prompt (fail closed if not):
#   the line is in history (no ignorespace/ignoredups/erasedups in the live HISTCONTROL, no
#   HISTIGNORE, no `set +o history`); promptvars is on (or PS0 is not expanded); there is no
#   INT trap (it would swallow the SIGINT); edit-and-execute-command (C-x C-e)
#   is unbound and `fc` cannot re-run history, since those run text that never
#   passes through PS0.
# The user's own HISTCONTROL and HISTIGNORE are kept aside (__gatekeep_histcontrol,
# __gatekeep_histignore) and applied only once the gate has read the line: PS0's subshell
# tries them on its own copy of the history and says (its exit status) whether they would have
# kept the line; if not, the entry is deleted before anything can write it to HISTFILE (the
# `history`, `exit` and `logout` functions below, and the prompt hook). That deletion comes
# after the gate, touches only the entry the gate read, and the prompt hook reads the history
# number afresh after it, so no line can use it to skip the gate or shift what the gate reads.
# Without the prompt hook (PROMPT_COMMAND replaced), the gate is sure of the line it read only
# when nothing could have kept that line out of history; otherwise it blocks, and says so.
#
# Out of a typed line's reach (a line that names any of this is asked about first,
# but the hook does not rely on that): its functions and settings are readonly, so
# no line can redefine or unset them; PS0 and PROMPT_COMMAND call them as `\name`,
# which no alias can replace; they are defined with alias expansion off, and every command
# word inside their `$( )` is quoted too (`\builtin`), since bash parses a command
# substitution's text again each time it runs, with the aliases of that moment; and the
# gate, in PS0's subshell, switches to posix mode, where `unset` beats any function
# of that name, and clears every function that could shadow what it runs (kill,
# printf, builtin, the interpreter's path...; `history`, `exit`, `logout` and `fc` are
# the hook's own readonly functions, and the gate calls `builtin history`). Key bindings that run a line's
# `$( )` before it is accepted (shell-expand-line, M-C-e) are unbound in every keymap.
#
# Once loaded, it exports GATEKEEP_HOOK="bash VERSION ps0 PID INTERPRETER" for
# `gatekeep doctor`, which runs as a child of this shell and cannot see its
# functions; the PID tells this shell from a child that inherited the variable.

[[ $- == *i* ]] || return 0                      # interactive shells only
[[ -n ${__gatekeep_loaded-} ]] && return 0       # loaded once, even if sourced twice
if (( BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4) )); then
    printf 'gatekeep: bash %s cannot gate command lines (PS0 needs bash 4.4 or newer); use zsh or a newer bash\n' \
        "$BASH_VERSION" >&2
    return 0
fi
declare -r __gatekeep_loaded=1
# No alias may reach into the functions below while they are defined; restored at the end.
__gatekeep_aliases=$(\shopt -p expand_aliases)
shopt -u expand_aliases
declare -ra __gatekeep_cmd=(__GATEKEEP_COMMAND__)
# What could shadow the gate inside PS0's subshell: the builtins it runs, and its interpreter.
declare -ra __gatekeep_builtins=(builtin command kill printf local return declare type)
declare -ra __gatekeep_shadows=("${__gatekeep_builtins[@]}" "${__gatekeep_cmd[0]}")
declare -r __gatekeep_mark='--gatekeep-report--'   # ends the history entry in the prompt's report

# The number of the last history entry as of the last prompt (set by the prompt
# hook) or line (set by PS0 itself, in the current shell, through an arithmetic
# subscript), and whether the prompt hook ran since the last line. After the gate,
# PS0 notes from its exit status the entry the user's history settings would have
# dropped (3), or kept while erasing older copies of it (4, erasedups), for
# __gatekeep_forget; 0 when none.
__gatekeep_base=0 __gatekeep_prior=0 __gatekeep_prompted=0 __gatekeep_fresh=0
__gatekeep_kept=0 __gatekeep_drop=0 __gatekeep_erase=0 __gatekeep_histcontrol= __gatekeep_histignore=
declare -r __gatekeep_ps0='${__gatekeep_none[__gatekeep_prior=__gatekeep_base,__gatekeep_base=\!,__gatekeep_fresh=__gatekeep_prompted,__gatekeep_prompted=0,0]-}$(\__gatekeep_gate)${__gatekeep_none[__gatekeep_kept=$?,__gatekeep_drop=__gatekeep_kept==3?__gatekeep_base:0,__gatekeep_erase=__gatekeep_kept==4?__gatekeep_base:0,0]-}'

__gatekeep_block() {
    # Runs inside PS0's command substitution: $$ is still the interactive shell.
    [[ -n ${1-} ]] && printf 'gatekeep: %s\n' "$1" >&2
    kill -INT $$
}

__gatekeep_last_entry() {
    # "  123* text" from `history 1`: sets number and line (empty when history is empty).
    # Read in a subshell in posix mode, where `unset` clears a function named `builtin`
    # (`history` itself is the hook's readonly function: `builtin` reaches the real one).
    __gatekeep_split_entry "$(POSIXLY_CORRECT=1; \unset -f builtin; HISTTIMEFORMAT='' \builtin history 1)"
}

__gatekeep_split_entry() {
    # Sets number and line from what `history 1` printed ($1).
    local entry=$1
    line=${entry#"${entry%%[![:space:]]*}"}      # drop the leading spaces,
    number=${line%%[!0-9]*}
    line=${line#"$number"}                       # the number,
    line=${line#\*}                              # the mark of an edited entry,
    line=${line#  }                              # and the two spaces before the text
}

__gatekeep_gate() {
    # PS0's command substitution is a subshell: nothing done here reaches the user's shell.
    # In posix mode `unset` is found before any function of that name; it then clears the
    # functions that could stand in for what the gate runs.
    POSIXLY_CORRECT=1
    \unset -f "${__gatekeep_shadows[@]}" 2>/dev/null
    local number line hides kept=0
    __gatekeep_last_entry
    if (( ! __gatekeep_fresh )); then
        # The prompt hook did not run since the last line, so no history number from a prompt
        # says where this line should be. The last entry is this line for sure only if nothing
        # could have kept the line out of history (what the prompt hook would have restored).
        [[ -o history ]] || hides="set +o history"
        [[ ${HISTCONTROL-} == *ignore* || ${HISTCONTROL-} == *erasedups* ]] && hides+="${hides:+, }HISTCONTROL"
        [[ -n ${HISTIGNORE-} ]] && hides+="${hides:+, }HISTIGNORE"
        builtin shopt -q cmdhist || hides+="${hides:+, }shopt -u cmdhist"
        if [[ -n $hides || $number != "$__gatekeep_base" ]]; then
            __gatekeep_block "its prompt hook did not run before this line (a later line of ~/.bashrc or a command replaced PROMPT_COMMAND), and ${hides:-a change of history numbers} could have kept this line out of history, so gatekeep cannot be sure which line it read; blocked. Put the gatekeep hook last in ~/.bashrc (edit it in bash --norc, started by your terminal), then open a new terminal"
            return
        fi
        printf '%s\n' "gatekeep: warning: its prompt hook did not run before this line (a later line of ~/.bashrc or a command replaced PROMPT_COMMAND); the line is still checked, but put the gatekeep hook last in ~/.bashrc" >&2
    elif (( __gatekeep_base - __gatekeep_prior != 1 )) || [[ $number != "$__gatekeep_base" ]]; then
        # PS0's \! is the number of the last history entry: exactly one more than at
        # the prompt, and that entry, or this line never reached history.
        __gatekeep_block "this line did not reach the shell's history (HISTCONTROL, HISTIGNORE or set +o history), so gatekeep cannot read it; blocked (expected entry $((__gatekeep_prior + 1)), found ${number:-none})"
        return
    fi
    # What the user's own history settings would have done with the line, tried on this subshell's
    # copy of the history (bash decides, HISTIGNORE's patterns and all): drop it (3), keep it and
    # erase its older copies (4), or keep it (0). Told to PS0 by the exit status; nothing here
    # changes the shell's own history.
    if [[ -n $__gatekeep_histcontrol$__gatekeep_histignore ]]; then
        local count=$HISTCMD
        builtin history -d "$number" 2>/dev/null
        HISTCONTROL=${__gatekeep_histcontrol//erasedups} HISTIGNORE=$__gatekeep_histignore builtin history -s -- "$line"
        if (( HISTCMD < count )); then
            kept=3
        elif [[ $__gatekeep_histcontrol == *erasedups* ]]; then
            HISTCONTROL=erasedups builtin history -s -- "$line"
            (( HISTCMD < count )) && kept=4       # it erased more than the copy just put back
        fi
    fi
    local -a ask=(--names-on-request)
    while :; do
        if [[ -r /dev/tty ]]; then
            "${__gatekeep_cmd[@]}" check --shell bash --quiet --can-contain "${ask[@]}" -- "$line" </dev/tty
        else
            "${__gatekeep_cmd[@]}" check --shell bash --quiet --no-prompt --can-contain "${ask[@]}" -- "$line"
        fi
        local status=$?
        # 3: the line's only questions are about words that may be typos; say once what this shell
        # runs by name beyond PATH and its builtins (aliases, hashed commands, functions)
        (( status == 3 && ${#ask[@]} == 1 )) || break
        ask=(--shell-names "${!BASH_ALIASES[*]} ${!BASH_CMDS[*]} $(builtin compgen -A function)")
    done
    case $status in
        0) ;;
        1) __gatekeep_block ;;
        2) __gatekeep_block "could not decide (see above); blocked" ;;
        4) __gatekeep_contained ;;
        126|127) __gatekeep_cannot_run "$status" ;;
        *) __gatekeep_block "gatekeep ended with status $status; blocked" ;;
    esac
    return $kept
}

__gatekeep_contained() {
    # gatekeep said: run the line contained (gatekeep run --sandbox), by a bash of its own, on the
    # terminal (PS0's output is captured), then drop the typed line as a block does: bash cannot
    # replace a line, so its output is the contained run's, and $? is that of the dropped line.
    if [[ -r /dev/tty && -w /dev/tty ]]; then
        "${__gatekeep_cmd[@]}" run --sandbox -- "${BASH:-/bin/bash}" -c "$line" </dev/tty >/dev/tty 2>/dev/tty
    else
        "${__gatekeep_cmd[@]}" run --sandbox -- "${BASH:-/bin/bash}" -c "$line" >&2
    fi
    kill -INT $$
}

__gatekeep_cannot_run() {
    # exec fails with E2BIG (126) when one argument is longer than the system allows: 128 KiB
    # on Linux (MAX_ARG_STRLEN, with its NUL). Counted in bytes, in the C locale.
    local LC_ALL=C
    if (( ${#line} > 131071 )); then
        __gatekeep_block "this line is ${#line} bytes long, more than one argument to a program may hold (128 KiB on Linux), so it cannot be handed to gatekeep; blocked, nothing of it ran (gatekeep could not read a line that long anyway)"
    else
        __gatekeep_block "cannot run ${__gatekeep_cmd[0]} (missing or not executable: status $1); blocked. Reinstall gatekeep, or open a shell without the hook: bash --norc"
    fi
}

# Applies what PS0 noted the user's history settings would have done to the line the gate read:
# delete its entry, or erase older copies of it (erasedups). Only while that entry is still the
# last one: HISTCMD is its number while a line runs (from `history` and `exit` below), one more
# at a prompt. Runs before anything that writes the history file; keeps $?.
__gatekeep_forget() {
    local status=$? number line
    if (( __gatekeep_drop )); then
        (( HISTCMD - __gatekeep_drop == 0 || HISTCMD - __gatekeep_drop == 1 )) &&
            builtin history -d "$__gatekeep_drop" 2>/dev/null
    elif (( __gatekeep_erase )); then
        __gatekeep_last_entry
        if [[ $number == "$__gatekeep_erase" ]]; then
            builtin history -d "$number" && HISTCONTROL=erasedups builtin history -s -- "$line"
        fi
    fi
    __gatekeep_drop=0 __gatekeep_erase=0
    return $status
}

# What writes the history file before the next prompt: `history -a`/`-w` (in a PROMPT_COMMAND
# before the hook's, a precmd function, or the line itself), `exit` and `logout`. Each first applies
# the user's settings to the line just read. (`exec` and a hang-up save history without them.)
history() {
    \__gatekeep_forget
    builtin history "$@"
}

exit() {
    local status=$?
    \__gatekeep_forget
    builtin exit "${@:-$status}"
}

logout() {
    local status=$?
    \__gatekeep_forget
    builtin logout "${@:-$status}"
}

__gatekeep_prompt() {
    local status=$?
    # Restore what the gate depends on; each could otherwise open it silently.
    builtin shopt -s promptvars cmdhist
    # Only when off: `set -o history` inside PROMPT_COMMAND also makes bash record
    # the PROMPT_COMMAND lines that run after this function.
    [[ -o history ]] || builtin set -o history
    __gatekeep_forget
    __gatekeep_history_settings
    [[ ${HISTSIZE-500} =~ ^[0-9]+$ ]] && (( HISTSIZE < 10 )) && HISTSIZE=500
    # One subshell (a fork per prompt), in posix mode (see __gatekeep_gate), reports three things,
    # in this order: the functions that stand in for builtins the hook uses (the gate holds
    # without those builtins; the user is told), a mark, the last history entry (as
    # __gatekeep_last_entry reads it), the mark again, and the INT trap. Only the entry and the
    # trap have text a line chooses. No line before the first mark can be the mark (they begin
    # "declare" or "/"), so the entry's number is read right after it; the trap comes last, and
    # what follows a mark inside the trap's text still ends in "' INT" (the quote that closes the
    # text): never what no trap looks like, so the trap is removed.
    local report shadows entry number line
    # (posix mode's typeset -F refuses a name with a slash, such as the interpreter's: compgen lists it)
    report=$'\n'$(POSIXLY_CORRECT=1; \unset -f typeset compgen; \typeset -F "${__gatekeep_builtins[@]}" shopt set bind trap unset
        \compgen -A function -- "${__gatekeep_cmd[0]}"
        \unset -f builtin trap; \builtin printf '%s\n' "$__gatekeep_mark"
        HISTTIMEFORMAT='' \builtin history 1; \builtin printf '%s\n' "$__gatekeep_mark"
        \trap -p INT)
    shadows=${report%%$'\n'"$__gatekeep_mark"*}
    report=${report#*$'\n'"$__gatekeep_mark"}     # the entry, the mark, the trap
    entry=${report%$'\n'"$__gatekeep_mark"*}
    __gatekeep_split_entry "${entry#$'\n'}"
    __gatekeep_base=${number:-0} __gatekeep_prompted=1
    report=${report##*$'\n'"$__gatekeep_mark"}
    report=${report#$'\n'}
    shadows=${shadows#$'\n'}
    if [[ -n $shadows ]]; then
        shadows=${shadows//$'\n'/ }
        builtin printf 'gatekeep: warning: functions stand in for builtins the hook uses (%s); the gate holds, but remove them: unset -f NAME\n' "${shadows% }" >&2
    fi
    # In posix mode bash 5.2 lists a signal left as it was too, as `trap -- - INT`: that is no trap.
    if [[ -n $report && $report != "trap -- - INT" && $report != "trap -- - SIGINT" ]]; then
        if (( BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1) )); then
            builtin trap - INT
            builtin printf 'gatekeep: removed a trap on INT: it would let a denied line run\n' >&2
        else
            builtin printf 'gatekeep: warning: a trap on INT is set, and this bash cannot gate lines while it is (remove it: trap - INT)\n' >&2
        fi
    fi
    __gatekeep_unbind
    [[ ${PS0-} == "$__gatekeep_ps0"* ]] || PS0=$__gatekeep_ps0${PS0-}
    return $status
}

# Editing commands that run text the gate never sees: edit-and-execute-command (C-x C-e,
# v in vi mode) runs the edited text without a new PS0, and shell-expand-line (M-C-e)
# runs every $( ) of the line being typed. Unbound in every keymap, at every prompt.
__gatekeep_unbind() {
    local keymap
    for keymap in emacs-standard emacs-meta emacs-ctlx vi-command vi-insert; do
        builtin bind -m "$keymap" -u edit-and-execute-command 2>/dev/null
        builtin bind -m "$keymap" -u shell-expand-line 2>/dev/null
    done
}

# `fc -s`, `fc -e`, a bare `fc` and `fc N` run history without a new PS0: refuse all but a
# listing, whose options are only -l, -n and -r (`fc -l -s` re-runs; `-e` takes an editor).
# gatekeep denies a typed `fc` outright (the built-in policy); this holds for scripts and functions.
fc() {
    local word listing
    listing=                                     # empty even should `local` be a function
    for word in "$@"; do
        case $word in
            --|-[0-9]*) break ;;                 # the end of the options; -N is an operand
            -*[!lnr]*) listing=; break ;;
            -*l*) listing=1 ;;
            -*) ;;
            *) break ;;
        esac
    done
    if [[ -n $listing ]]; then
        builtin fc "$@"
    else
        builtin printf 'gatekeep: fc re-runs history without the gate; blocked (history lists it)\n' >&2
        return 1
    fi
}

# The user's HISTCONTROL and HISTIGNORE, as set in ~/.bashrc or by a later line, go aside, to be
# applied after the gate (see the top); the live ones let every line into history.
__gatekeep_history_settings() {
    if [[ ${HISTCONTROL-} == *ignore* || ${HISTCONTROL-} == *erasedups* ]]; then
        __gatekeep_histcontrol=$HISTCONTROL; HISTCONTROL=
    fi
    if [[ -n ${HISTIGNORE-} ]]; then
        __gatekeep_histignore=$HISTIGNORE; HISTIGNORE=
    fi
}

__gatekeep_prompt_init() {
    __gatekeep_history_settings
    PS0=$__gatekeep_ps0${PS0-}
    __gatekeep_unbind
    # Run last in PROMPT_COMMAND, after anything that reads history (history -n), keeping $?.
    # Quoted, so that no alias named like it can stand in for it.
    if [[ $(\declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
        PROMPT_COMMAND+=('\__gatekeep_prompt')
    else
        PROMPT_COMMAND=${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}'\__gatekeep_prompt'
    fi
}
__gatekeep_prompt_init
readonly -f __gatekeep_block __gatekeep_contained __gatekeep_last_entry __gatekeep_split_entry __gatekeep_gate __gatekeep_cannot_run __gatekeep_forget \
    __gatekeep_history_settings __gatekeep_prompt __gatekeep_unbind fc history exit logout
eval "$__gatekeep_aliases"
unset __gatekeep_aliases
export GATEKEEP_HOOK="bash ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]} ps0 $$ ${__gatekeep_cmd[0]}"
