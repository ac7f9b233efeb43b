# A stand-in for bash-preexec (github.com/rcaloras/bash-preexec), written for
# gatekeep's hook tests from that project's documented behaviour: its script can
# be neither committed here nor fetched in CI. It uses bash the same way:
#   * it installs itself at the first prompt, from a snippet it appends to
#     PROMPT_COMMAND, so it can be sourced anywhere in ~/.bashrc;
#   * it then owns the DEBUG trap (keeping an earlier trap as a preexec function)
#     and rebuilds PROMPT_COMMAND as: its precmd runner, whatever was there, and
#     a marker that the next DEBUG trap is the start of a typed line;
#   * it takes ignorespace out of HISTCONTROL, and reads the line from history;
#   * it runs precmd_functions before each prompt and preexec_functions with the
#     typed line before it runs, but not for an entry of PROMPT_COMMAND, nor for a
#     command whose output is not the terminal (a prompt's or PS0's $( )).
[[ -n ${__standin_loaded-} ]] && return 0
__standin_loaded=1
__standin_typed=

__standin_precmd() {
    local status=$? f
    for f in "${precmd_functions[@]}"; do
        declare -F "$f" >/dev/null && "$f"
    done
    return $status
}

__standin_mark_typed() { __standin_typed=1; }

__standin_in_prompt_command() {
    local IFS=$'\n;' entry
    for entry in ${PROMPT_COMMAND[*]}; do
        [[ ${entry//[[:space:]]/} == "${1//[[:space:]]/}" ]] && return 0
    done
    return 1
}

__standin_debug() {
    [[ -n $__standin_typed && -z ${COMP_LINE-} ]] || return 0
    # as bash-preexec does: nothing whose output is not the terminal (a prompt's $( ), PS0's gate),
    # and nothing that is an entry of PROMPT_COMMAND (its __bp_in_prompt_command)
    [[ -t 1 ]] || return 0
    if __standin_in_prompt_command "$BASH_COMMAND"; then
        __standin_typed=
        return 0
    fi
    __standin_typed=
    local entry f
    entry=$(HISTTIMEFORMAT='' builtin history 1)
    entry=${entry#"${entry%%[![:space:]]*}"}
    entry=${entry#*[0-9][ *]}
    entry=${entry# }
    for f in "${preexec_functions[@]}"; do
        declare -F "$f" >/dev/null && "$f" "$entry"
    done
    return 0
}

__standin_install() {
    local prior rest
    prior=$(trap -p DEBUG)
    prior=${prior#"trap -- '"}
    prior=${prior%"' DEBUG"}
    if [[ -n $prior ]]; then
        eval "__standin_prior_debug() { $prior; }"
        preexec_functions+=(__standin_prior_debug)
    fi
    trap '__standin_debug' DEBUG
    HISTCONTROL=${HISTCONTROL//ignorespace/}
    HISTCONTROL=${HISTCONTROL//ignoreboth/ignoredups}
    rest=${PROMPT_COMMAND//__standin_install/}
    rest=${rest#$'\n'}
    rest=${rest%$'\n'}
    PROMPT_COMMAND=$'__standin_precmd\n'${rest:+$rest$'\n'}__standin_mark_typed
    __standin_mark_typed
}

PROMPT_COMMAND=${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}__standin_install
