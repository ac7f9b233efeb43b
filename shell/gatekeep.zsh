# gatekeep hook for zsh. Install with `gatekeep install --shell zsh`, or at the END of ~/.zshrc:
#     eval "$(gatekeep hook zsh)"
# (install writes a guarded form: should gatekeep be gone, a new shell loads a fallback
# that blocks every line and says why, instead of starting ungated: see hook.py rc_lines).
#
# How it gates: preexec receives the whole line before any of it runs and asks
# gatekeep; preexec itself cannot cancel the line, so TRAPDEBUG enforces the
# verdict: with DEBUG_BEFORE_CMD (the default) it runs before each command,
# and a trap that ends with ERR_EXIT set and a failing status drops the rest
# of the line. It acts only on top-level commands of the line typed at the
# prompt, and blocks any such command that runs when no approved line is
# pending. Wrapping the accept-line widget would not be a gate: accept-and-hold
# (M-a) and C-o run a line without it.
#
# Out of a typed line's reach (a line that names any of this is asked about
# first, but the hook does not rely on that):
#   * every function is defined from a string after alias expansion is turned
#     off, so no alias, global ones included, reaches into its body;
#   * each body is kept in a readonly table: before every command TRAPDEBUG
#     checks preexec's body, before every line preexec checks TRAPDEBUG's, and
#     at every prompt all are put back if changed or removed, and re-registered;
#   * nothing that decides relies on a command a function could stand in for:
#     options are set through the `options` table, the trap blocks with an
#     assignment and arithmetic, and a function named like gatekeep's
#     interpreter blocks every line (it would stand in for gatekeep);
#   * GLOB_SUBST is kept off (with it, `$x` would run commands hidden in a glob
#     qualifier of x's value), and the widgets that expand `$( )` and the like
#     before a line is accepted (Tab, C-x *, C-x g...) refuse to when the line
#     holds one.
#
# History settings are the user's own: preexec receives the typed line whatever
# they are (HIST_IGNORE_SPACE, HIST_IGNORE_DUPS, HISTORY_IGNORE, zshaddhistory),
# so the hook changes none of them; should zsh ever pass no line while the line
# runs commands, it is blocked.
#
# Once loaded, it exports GATEKEEP_HOOK="zsh VERSION preexec+TRAPDEBUG PID INTERPRETER"
# for `gatekeep doctor`, which runs as a child of this shell and cannot see its
# functions; the PID tells this shell from a child that inherited the variable.

[[ -o interactive ]] || return 0                 # interactive shells only
(( ${+__gatekeep_loaded} )) && return 0          # loaded once, even if sourced twice
typeset -gr __gatekeep_loaded=1
typeset -g __gatekeep_aliases_were=${options[aliases]}
options[aliases]=off                             # no alias reaches the bodies defined below
typeset -gra __gatekeep_cmd=(__GATEKEEP_COMMAND__)
typeset -g __gatekeep_verdict=''                 # allow | deny for the pending line, '' when none
typeset -g __gatekeep_widget_count=0             # how many widgets there were when the guards were last checked
# What in a line makes the expansion widgets refuse: it would run or evaluate before the line is vetted.
typeset -gra __gatekeep_needles=('$(' '`' '<(' '>(' '=(' '$[' '${' '$~' '$=' '$^' '~[')
typeset -gra __gatekeep_widgets=(
    expand-or-complete expand-or-complete-prefix menu-expand-or-complete expand-word list-expand
    complete-word menu-complete reverse-menu-complete list-choices delete-char-or-list
    accept-and-menu-complete expand-cmd-path _expand_word _expand_alias _list_expansions _complete_help
    _complete_debug _complete_tag _correct_word _correct_filename _history-complete-older
    _history-complete-newer _most_recent_file _next_tags _read_comp _bash_complete-word
    _bash_list-choices _generic
)

functions[__gatekeep_preexec]='
    local line=$1 rc tool=${__gatekeep_cmd[@]:0:1} bytes multibyte aliasing=${options[aliases]}
    local -a ask
    __gatekeep_verdict=deny
    if [[ ${functions[TRAPDEBUG]-} != ${__gatekeep_bodies[TRAPDEBUG]} ]]; then
        options[aliases]=off                     # a body assigned here is parsed with the aliases of now
        functions[TRAPDEBUG]=${__gatekeep_bodies[TRAPDEBUG]}
        options[aliases]=$aliasing
    fi
    if (( ${+functions[$tool]} )); then
        print -ru2 -- "gatekeep: a function named $tool stands in for gatekeep; blocked. Remove it in a shell without the hook (zsh -f), or fix ~/.zshrc"
    elif [[ -z $line && -n $3 ]]; then
        print -ru2 -- "gatekeep: zsh did not pass the typed line to the hook, so gatekeep cannot read it; blocked"
    else
        ask=(--names-on-request)
        while :; do
            if [[ -r /dev/tty ]]; then
                "${__gatekeep_cmd[@]}" check --shell zsh --quiet --can-contain $ask -- "$line" </dev/tty
            else
                "${__gatekeep_cmd[@]}" check --shell zsh --quiet --no-prompt --can-contain $ask -- "$line"
            fi
            rc=$?
            # 3: the line'"'"'s only questions are about words that may be typos; say once what
            # this shell runs by name beyond PATH and its builtins (aliases, suffix aliases as
            # *.EXT, functions, hashed commands); none while CORRECT would offer another command
            (( rc == 3 && ${#ask} == 1 )) || break
            if [[ ${options[correct]} == on || ${options[correctall]} == on ]]; then
                ask=()
            else
                ask=(--shell-names "${(k)aliases} ${(k)galiases} ${${(k)saliases}/#/*.} ${(k)functions} ${(k)commands}")
            fi
        done
        case $rc in
            0) __gatekeep_verdict=allow ;;
            1) ;;
            4)
                # run contained (gatekeep run --sandbox) by a zsh of its own, in place of the typed
                # line, which is then dropped: its output is the contained run'"'"'s, $? is not
                if [[ -r /dev/tty && -w /dev/tty ]]; then
                    "${__gatekeep_cmd[@]}" run --sandbox -- "${commands[zsh]:-/bin/zsh}" -c "$line" </dev/tty >/dev/tty 2>/dev/tty
                else
                    "${__gatekeep_cmd[@]}" run --sandbox -- "${commands[zsh]:-/bin/zsh}" -c "$line"
                fi ;;
            2) print -ru2 -- "gatekeep: could not decide (see above); blocked" ;;
            126|127)
                # exec fails with E2BIG (zsh: 127) when one argument is longer than the system
                # allows: 128 KiB on Linux (MAX_ARG_STRLEN, with its NUL). Counted in bytes.
                multibyte=${options[multibyte]}; options[multibyte]=off
                bytes=${#line}; options[multibyte]=$multibyte
                if (( bytes > 131071 )); then
                    print -ru2 -- "gatekeep: this line is $bytes bytes long, more than one argument to a program may hold (128 KiB on Linux), so it cannot be handed to gatekeep; blocked, nothing of it ran (gatekeep could not read a line that long anyway)"
                else
                    print -ru2 -- "gatekeep: cannot run $tool (missing or not executable: status $rc); blocked. Reinstall gatekeep, or open a shell without the hook: zsh -f"
                fi ;;
            *) print -ru2 -- "gatekeep: gatekeep ended with status $rc; blocked" ;;
        esac
    fi
'

functions[__gatekeep_precmd]='
    local rc=$?
    __gatekeep_verdict=""                        # a verdict is for one line only
    __gatekeep_register
    return $rc
'

# No index arithmetic in the bodies (KSH_ARRAYS would shift it), and options go through the
# `options` table: no function can stand in for an assignment.
functions[__gatekeep_register]='
    local name aliasing=${options[aliases]}
    # DEBUG_BEFORE_CMD: TRAPDEBUG must run before each command, not after it.
    # INTERACTIVE_COMMENTS: without it zsh runs `ls # ; rm x` as two commands,
    # while gatekeep (like bash) reads everything after `#` as a comment.
    options[debugbeforecmd]=on
    options[interactivecomments]=on
    if [[ ${options[globsubst]} == on ]]; then
        options[globsubst]=off
        print -ru2 -- "gatekeep: turned GLOB_SUBST off: with it, \$x runs the commands a glob qualifier in the value of x holds"
    fi
    [[ " ${preexec_functions[*]} " == *" __gatekeep_preexec "* ]] || preexec_functions+=(__gatekeep_preexec)
    [[ " ${precmd_functions[*]} " == *" __gatekeep_precmd "* ]] || precmd_functions+=(__gatekeep_precmd)
    # put back every part of the hook that was changed or removed (a line that does so asks first),
    # parsed with aliases off: zsh parses a body assigned to functions[...] with the aliases of now
    options[aliases]=off
    for name in ${(k)__gatekeep_bodies}; do
        [[ ${functions[$name]-} == ${__gatekeep_bodies[$name]} ]] || functions[$name]=${__gatekeep_bodies[$name]}
    done
    options[aliases]=$aliasing
    # the expansion widgets: wrapped once, and again whenever something (compinit) redefines them.
    # Looking one up costs ~25 us, so the full pass runs only when the widgets on Tab, C-x * and
    # C-x g are not ours, or the number of widgets changed (compinit adds dozens).
    if [[ ${#widgets} != $__gatekeep_widget_count || ${widgets[expand-or-complete]} != user:__gatekeep_guard
          || ${widgets[expand-word]} != user:__gatekeep_guard || ${widgets[list-expand]} != user:__gatekeep_guard ]]; then
        for name in $__gatekeep_widgets; do
            (( ${+widgets[$name]} )) || continue
            [[ ${widgets[$name]} == user:__gatekeep_guard ]] && continue
            zle -A $name __gatekeep_widget_$name 2>/dev/null && zle -N $name __gatekeep_guard
        done
        __gatekeep_widget_count=${#widgets}
    fi
'

# A widget that expands or completes the line being typed, unless the line holds something
# that would run before it is vetted: then it refuses, and says why.
functions[__gatekeep_guard]='
    local needle
    for needle in $__gatekeep_needles; do
        if [[ $BUFFER == *"$needle"* ]]; then
            zle -M "gatekeep: not expanded: the line holds ${needle}, which would run before gatekeep vets the line"
            return 1
        fi
    done
    zle __gatekeep_widget_$WIDGET -- "$@"
'

# Only top-level commands of the typed line: inside TRAPDEBUG (a function) the
# context is "toplevel shfunc"; function bodies, sourced files, `eval` and
# command substitutions add more and run under the verdict of their line.
# It blocks without calling anything a function could stand in for: ERR_EXIT,
# set through the options table, and a failing arithmetic status make zsh skip
# the command and drop the rest of the line (the option does not outlive the trap).
functions[TRAPDEBUG]='
    if [[ ${zsh_eval_context[*]} != "toplevel shfunc" ]]; then
        (( 1 ))
    elif [[ $__gatekeep_verdict == allow && ${functions[__gatekeep_preexec]-} == ${__gatekeep_bodies[__gatekeep_preexec]}
            && " ${preexec_functions[*]} " == *" __gatekeep_preexec "* ]]; then
        (( 1 ))
    else
        [[ -z $__gatekeep_verdict ]] && print -ru2 -- "gatekeep: a command ran without a vetted line; blocked"
        [[ $__gatekeep_verdict == allow ]] && print -ru2 -- "gatekeep: the hook was changed since the line was vetted; blocked"
        __gatekeep_verdict=deny
        options[errexit]=on
        (( 0 ))
    fi
'

# `r` and `fc` re-run history without preexec: refuse all but a listing (fzf runs `fc -rl 1`),
# whose options are only those that shape the list (`fc -l -e -` would re-run in bash; zsh
# lists, but the options are read the same way). gatekeep denies a typed `fc` or `r` outright
# (the built-in policy); these hold for functions and widgets.
functions[r]='print -ru2 -- "gatekeep: r re-runs history without the gate; blocked (history lists it)"; return 1'
functions[fc]='
    local word listing
    listing=
    for word in "$@"; do
        case $word in
            --) break ;;
            -[0-9]*) break ;;
            -*[^lnrdfEiDI]*) listing=; break ;;
            -*l*) listing=1 ;;
            -*) ;;
            *) break ;;
        esac
    done
    if [[ -n $listing ]]; then
        builtin fc "$@"
    else
        print -ru2 -- "gatekeep: fc re-runs history without the gate; blocked (history lists it)"
        return 1
    fi
'

# Every body as zsh stores it, for comparison and repair.
typeset -grA __gatekeep_bodies=(
    __gatekeep_preexec "${functions[__gatekeep_preexec]}"
    __gatekeep_precmd "${functions[__gatekeep_precmd]}"
    __gatekeep_register "${functions[__gatekeep_register]}"
    __gatekeep_guard "${functions[__gatekeep_guard]}"
    TRAPDEBUG "${functions[TRAPDEBUG]}"
    r "${functions[r]}"
    fc "${functions[fc]}"
)
options[aliases]=$__gatekeep_aliases_were
unset __gatekeep_aliases_were

__gatekeep_register
export GATEKEEP_HOOK="zsh $ZSH_VERSION preexec+TRAPDEBUG $$ ${__gatekeep_cmd[@]:0:1}"
