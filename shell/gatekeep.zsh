# gatekeep hook for zsh. Install with, at the END of ~/.zshrc:
#     eval "$(gatekeep hook zsh)"
#
# How it gates: preexec receives the whole line before any of it runs and asks
# gatekeep; preexec itself cannot cancel the line, so TRAPDEBUG enforces the
# verdict: with DEBUG_BEFORE_CMD (the default) it runs before each command,
# and `return 1` from it drops the rest of the line. It acts only on top-level
# commands of the line typed at the prompt, and blocks any such command that
# runs when no approved line is pending. Wrapping the accept-line widget would
# not be a gate: accept-and-hold (M-a) and C-o run a line without it.
#
# Once loaded, it exports GATEKEEP_HOOK="zsh VERSION preexec+TRAPDEBUG PID INTERPRETER"
# for `gatekeep doctor`, which runs as a child of this shell and cannot see its
# functions; the PID tells this shell from a child that inherited the variable.

[[ -o interactive ]] || return 0                 # interactive shells only
(( ${+__gatekeep_loaded} )) && return 0          # loaded once, even if sourced twice
typeset -g __gatekeep_loaded=1
typeset -ga __gatekeep_cmd=(__GATEKEEP_COMMAND__)
typeset -g __gatekeep_verdict=''                 # allow | deny for the pending line, '' when none

__gatekeep_preexec() {
    local line=$1 rc
    __gatekeep_verdict=deny
    if [[ -r /dev/tty ]]; then
        "${__gatekeep_cmd[@]}" check --shell zsh --quiet -- "$line" </dev/tty
    else
        "${__gatekeep_cmd[@]}" check --shell zsh --quiet --no-prompt -- "$line"
    fi
    rc=$?
    case $rc in
        0) __gatekeep_verdict=allow ;;
        1) ;;
        2) print -ru2 -- "gatekeep: could not decide (see above); blocked" ;;
        126|127) print -ru2 -- "gatekeep: cannot run ${__gatekeep_cmd[1]} (missing or not executable); blocked. Reinstall gatekeep, or open a shell without the hook: zsh -f" ;;
        *) print -ru2 -- "gatekeep: gatekeep ended with status $rc; blocked" ;;
    esac
}

__gatekeep_precmd() {
    local rc=$?
    __gatekeep_verdict=''                        # a verdict is for one line only
    __gatekeep_register
    return $rc
}

__gatekeep_register() {
    # DEBUG_BEFORE_CMD: TRAPDEBUG must run before each command, not after it.
    # INTERACTIVE_COMMENTS: without it zsh runs `ls # ; rm x` as two commands,
    # while gatekeep (like bash) reads everything after `#` as a comment.
    setopt DEBUG_BEFORE_CMD INTERACTIVE_COMMENTS
    (( ${preexec_functions[(I)__gatekeep_preexec]} )) || preexec_functions+=(__gatekeep_preexec)
    (( ${precmd_functions[(I)__gatekeep_precmd]} )) || precmd_functions+=(__gatekeep_precmd)
    # put back our TRAPDEBUG if it was removed or replaced (a line that does so asks first)
    [[ ${functions[TRAPDEBUG]-} == "$__gatekeep_trapdebug_body" ]] || functions[TRAPDEBUG]=$__gatekeep_trapdebug
typeset -g __gatekeep_trapdebug_body=${functions[TRAPDEBUG]}  # as zsh stores it, for comparison
}

# Only top-level commands of the typed line: inside TRAPDEBUG (a function) the
# context is "toplevel shfunc"; function bodies, sourced files, `eval` and
# command substitutions add more and run under the verdict of their line.
typeset -g __gatekeep_trapdebug='
    [[ ${zsh_eval_context[*]} == "toplevel shfunc" ]] || return 0
    [[ $__gatekeep_verdict == allow ]] && return 0
    [[ -z $__gatekeep_verdict ]] && print -ru2 -- "gatekeep: a command ran without a vetted line; blocked"
    __gatekeep_verdict=deny
    return 1
'
functions[TRAPDEBUG]=$__gatekeep_trapdebug

# `r` and `fc` re-run history without preexec: refuse all but listing.
r() { print -ru2 -- "gatekeep: r re-runs history without the gate; blocked"; return 1 }
fc() {
    case ${1-} in
        -l*|-nl*|-ln*|-rl*|-lr*) builtin fc "$@" ;;
        *) print -ru2 -- "gatekeep: fc re-runs history without the gate; blocked (fc -l still lists it)"; return 1 ;;
    esac
}

__gatekeep_register
export GATEKEEP_HOOK="zsh $ZSH_VERSION preexec+TRAPDEBUG $$ ${__gatekeep_cmd[@]:0:1}"
