# gatekeep hook for bash 4.4 or newer. Install with, at the END of ~/.bashrc:
#     eval "$(gatekeep hook bash)"
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
#   the line is in history (no ignorespace/ignoredups/erasedups, HISTIGNORE,
#   `set +o history`); promptvars is on (or PS0 is not expanded); there is no
#   INT trap (it would swallow the SIGINT); edit-and-execute-command (C-x C-e)
#   is unbound and `fc` cannot re-run history, since those run text that never
#   passes through PS0.
#
# Out of a typed line's reach (a line that names any of this is asked about first,
# but the hook does not rely on that): its functions and settings are readonly, so
# no line can redefine or unset them; PS0 and PROMPT_COMMAND call them as `\name`,
# which no alias can replace; they are defined with alias expansion off; and the
# gate, in PS0's subshell, switches to posix mode, where `unset` beats any function
# of that name, and clears every function that could shadow what it runs (kill,
# printf, history, the interpreter's path...). Key bindings that run a line's
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
__gatekeep_aliases=$(shopt -p expand_aliases)
shopt -u expand_aliases
declare -ra __gatekeep_cmd=(__GATEKEEP_COMMAND__)
# What could shadow the gate inside PS0's subshell: the builtins it runs, and its interpreter.
declare -ra __gatekeep_shadows=(builtin command kill printf history local return declare type "${__gatekeep_cmd[0]}")

# The number of the last history entry as of the last prompt (set by the prompt
# hook) or line (set by PS0 itself, in the current shell, through an arithmetic
# subscript), and whether the prompt hook ran since the last line.
__gatekeep_base=0 __gatekeep_prior=0 __gatekeep_prompted=0 __gatekeep_fresh=0
declare -r __gatekeep_ps0='${__gatekeep_none[__gatekeep_prior=__gatekeep_base,__gatekeep_base=\!,__gatekeep_fresh=__gatekeep_prompted,__gatekeep_prompted=0,0]-}$(\__gatekeep_gate)'

__gatekeep_block() {
    # Runs inside PS0's command substitution: $$ is still the interactive shell.
    [[ -n ${1-} ]] && printf 'gatekeep: %s\n' "$1" >&2
    kill -INT $$
}

__gatekeep_last_entry() {
    # "  123* text" from `history 1`: sets number and line (empty when history is empty).
    # Read in a subshell in posix mode, where no function can stand in for `history`.
    local entry
    entry=$(POSIXLY_CORRECT=1; \unset -f builtin history; HISTTIMEFORMAT='' builtin history 1)
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
    local number line
    __gatekeep_last_entry
    # PS0's \! is the number of the last history entry: exactly one more than at
    # the prompt, and that entry, or this line never reached history.
    if (( __gatekeep_base - __gatekeep_prior != 1 )) || [[ $number != "$__gatekeep_base" ]]; then
        __gatekeep_block "this line did not reach the shell's history (HISTCONTROL, HISTIGNORE or set +o history), so gatekeep cannot read it; blocked (expected entry $((__gatekeep_prior + 1)), found ${number:-none})"
        return
    fi
    (( __gatekeep_fresh )) || printf '%s\n' \
        "gatekeep: warning: its prompt hook is not running (PROMPT_COMMAND was replaced); put eval \"\$(gatekeep hook bash)\" last in ~/.bashrc" >&2
    if [[ -r /dev/tty ]]; then
        "${__gatekeep_cmd[@]}" check --shell bash --quiet -- "$line" </dev/tty
    else
        "${__gatekeep_cmd[@]}" check --shell bash --quiet --no-prompt -- "$line"
    fi
    local status=$?
    case $status in
        0) ;;
        1) __gatekeep_block ;;
        2) __gatekeep_block "could not decide (see above); blocked" ;;
        126|127) __gatekeep_block "cannot run ${__gatekeep_cmd[0]} (missing or not executable); blocked. Reinstall gatekeep, or open a shell without the hook: bash --norc" ;;
        *) __gatekeep_block "gatekeep ended with status $status; blocked" ;;
    esac
}

__gatekeep_prompt() {
    local status=$?
    # Restore what the gate depends on; each could otherwise open it silently.
    builtin shopt -s promptvars cmdhist
    # Only when off: `set -o history` inside PROMPT_COMMAND also makes bash record
    # the PROMPT_COMMAND lines that run after this function.
    [[ -o history ]] || builtin set -o history
    [[ ${HISTCONTROL-} == *ignore* || ${HISTCONTROL-} == *erasedups* ]] && HISTCONTROL=
    [[ -n ${HISTIGNORE-} ]] && HISTIGNORE=
    [[ ${HISTSIZE-500} =~ ^[0-9]+$ ]] && (( HISTSIZE < 10 )) && HISTSIZE=500
    # In one subshell, in posix mode (see __gatekeep_gate): the INT trap, and the functions that
    # stand in for builtins the hook uses. The gate holds without those builtins; the user is told.
    local report shadows
    report=$(POSIXLY_CORRECT=1; \unset -f typeset; typeset -F "${__gatekeep_shadows[@]}" shopt set bind trap unset
        \unset -f trap; trap -p INT)
    shadows=${report%%trap -- *}
    if [[ -n $shadows ]]; then
        shadows=${shadows//$'\n'/ }
        builtin printf 'gatekeep: warning: functions stand in for builtins the hook uses (%s); the gate holds, but remove them: unset -f NAME\n' "${shadows% }" >&2
    fi
    if [[ $report == *"trap -- "* ]]; then
        if (( BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1) )); then
            builtin trap - INT
            builtin printf 'gatekeep: removed a trap on INT: it would let a denied line run\n' >&2
        else
            builtin printf 'gatekeep: warning: a trap on INT is set, and this bash cannot gate lines while it is (remove it: trap - INT)\n' >&2
        fi
    fi
    __gatekeep_unbind
    [[ ${PS0-} == "$__gatekeep_ps0"* ]] || PS0=$__gatekeep_ps0${PS0-}
    local number line
    __gatekeep_last_entry
    __gatekeep_base=${number:-0} __gatekeep_prompted=1
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

# `fc -s`, `fc -e` and a bare `fc` run history without a new PS0: refuse them.
fc() {
    case ${1-} in
        -l*|-nl*|-ln*|-rl*|-lr*) builtin fc "$@" ;;
        *) printf 'gatekeep: fc re-runs history without the gate; blocked (fc -l still lists it)\n' >&2; return 1 ;;
    esac
}

__gatekeep_prompt_init() {
    PS0=$__gatekeep_ps0${PS0-}
    __gatekeep_unbind
    # Run last in PROMPT_COMMAND, after anything that reads history (history -n), keeping $?.
    # Quoted, so that no alias named like it can stand in for it.
    if [[ $(declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
        PROMPT_COMMAND+=('\__gatekeep_prompt')
    else
        PROMPT_COMMAND=${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}'\__gatekeep_prompt'
    fi
}
__gatekeep_prompt_init
readonly -f __gatekeep_block __gatekeep_last_entry __gatekeep_gate __gatekeep_prompt __gatekeep_unbind fc
eval "$__gatekeep_aliases"
unset __gatekeep_aliases
export GATEKEEP_HOOK="bash ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]} ps0 $$ ${__gatekeep_cmd[0]}"
