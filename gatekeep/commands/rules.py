"""`gatekeep rules add|list|remove|test`: manage and explain the policy."""

from __future__ import annotations

import json
import os
import sys

import click

from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ALLOW, EXIT_BLOCKED, FatalError
from gatekeep.core.paths import current_directory, get_paths
from gatekeep.judge.gate import evaluate, verdict_json
from gatekeep.judge.managed import FLOORS
from gatekeep.judge.match import canonical, compile_rule, first_word
from gatekeep.judge.policy import load_policy


def _target(policy_file: str | None) -> str:
    return policy_file or get_paths().user_policy


def rules_add(patterns, verdict: str, policy_file: str | None, excepts: tuple[str, ...] = ()) -> int:
    """Add each pattern (a str is one) and say what is stored: a pattern is stored in its canonical
    form (`git push:*` as `git push *`), said when that differs from what was typed. An allow
    pattern that would allow every command is refused (as `rules import` refuses it); one a deny
    rule would always decide first, or whose command is not found here (`gti *`), is added with a
    warning."""
    from gatekeep.record.policy_edit import add_rule

    patterns = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    if excepts and verdict == "allow":
        raise FatalError("only ask and deny rules take exceptions (--except): use --ask or --deny")
    for pattern in patterns:
        try:
            compile_rule(pattern, verdict, "user", "", excepts)
            if any(not e.strip() for e in excepts):
                raise ValueError("an exception cannot be empty")
            if any(" | " in e for e in (pattern, *excepts) if excepts):
                raise ValueError("a pipeline pattern cannot take exceptions, nor be one")
        except ValueError as e:
            raise FatalError(str(e)) from None
        if verdict == "allow" and canonical(pattern).split(" ")[0] == "*":
            raise FatalError(
                f"'{visible(pattern)}' would allow every command; set `default: allow` in the policy if you mean it"
            )
    path = _target(policy_file)
    for pattern in patterns:
        stored = canonical(pattern)
        for warning in _warnings(stored, verdict, policy_file):
            click.echo(f"gatekeep: warning: {warning}", err=True)
        result = add_rule(get_paths(), path, pattern, verdict, excepts)
        messages = {"added": f"added {verdict} rule", "exists": f"{verdict} rule already present"}
        message = messages.get(result, f"{verdict} rule {result}")
        shown = "".join(f" except '{visible(e)}'" for e in excepts)
        as_typed = "" if stored == " ".join(pattern.split()) else f" (stored as '{visible(stored)}')"
        click.echo(f"{message}: '{visible(pattern)}'{as_typed}{shown} in {path}")
    return EXIT_ALLOW


def _warnings(pattern: str, verdict: str, policy_file: str | None) -> list[str]:
    """What a user would want to hear about a rule they add: a command word not found here (a
    typo: `gti *`), and an allow rule that a deny rule decides first (`rm -rf ~`: deny beats allow)."""
    from gatekeep.judge.decide import is_command_name

    warnings = []
    word = first_word(pattern)
    if word and "/" not in word and not is_command_name(word):
        warnings.append(f"'{visible(word)}' is no command here (not on PATH, nor a shell builtin): is it a typo?")
    if verdict == "allow" and "*" not in pattern and " | " not in pattern:
        from gatekeep.core.errors import PolicyError

        try:
            policy = load_policy(get_paths(), user_policy=policy_file)
        except (PolicyError, OSError):
            return warnings  # a policy that does not load says so itself on the next line
        verdict_now = evaluate(pattern, policy, current_directory())
        if verdict_now.decision == "deny":
            warnings.append(f"this rule can never apply: deny beats allow, and {verdict_now.reason}")
    return warnings


def rules_edit(policy_file: str | None) -> int:
    """Open the user policy in $VISUAL or $EDITOR (vi), and save what the editor wrote only when it
    loads (record/policy_edit.edit_policy). Typed at a gated prompt, it is also the way out of a
    broken policy, which blocks every other line (check.WAY_OUT)."""
    import shlex
    import subprocess

    from gatekeep.record.policy_edit import edit_policy

    editor = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")

    def run_editor(path: str) -> None:
        try:
            subprocess.run([*editor, path], check=False)
        except OSError as e:
            raise FatalError(f"cannot start the editor {editor[0]} ({e.strerror or e}); set EDITOR") from None

    def again(error: str) -> bool:
        click.echo(f"gatekeep: {error}", err=True)
        if not sys.stdin.isatty():
            return False
        return click.confirm("edit it again (no: keep the policy as it was)?", default=True, err=True)

    path = _target(policy_file)
    result = edit_policy(get_paths(), path, run_editor, again)
    said = {"saved": f"saved {path}", "unchanged": f"no change to {path}", "kept": f"kept {path} as it was"}
    click.echo(said[result])
    return EXIT_ALLOW if result != "kept" else EXIT_BLOCKED


def rules_remove(pattern: str, policy_file: str | None) -> int:
    from gatekeep.record.policy_edit import remove_rule

    path = _target(policy_file)
    removed = remove_rule(get_paths(), path, pattern)
    if not removed:
        click.echo(f"gatekeep: no rule '{visible(pattern)}' in {path}", err=True)
        return EXIT_BLOCKED
    click.echo(f"removed {', '.join(removed)} rule '{visible(pattern)}' from {path}")
    return EXIT_ALLOW


LAYERS = ("built-in", "system", "managed", "user", "project")  # as policy.py names them


def rules_list(
    policy_file: str | None, as_json: bool, layers: tuple[str, ...] = (), no_builtin: bool = False
) -> int:
    """Every rule, or only those of `layers` (all when empty), without the built-in ones if `no_builtin`."""
    policy = load_policy(get_paths(), policy_file, current_directory())
    shown = set(layers or LAYERS) - ({"built-in"} if no_builtin else set())
    rules = [
        {"pattern": r.pattern, "verdict": r.verdict, "layer": r.layer, "path": r.path, "except": list(r.excepts)}
        for r in (*policy.rules, *policy.locked)  # a managed policy's locks: verdict "lock"
    ]
    for layer in policy.layers:  # an untrusted project's allow rules: shown, marked, not applied
        rules += [
            {"pattern": p, "verdict": "allow", "layer": layer.name, "path": str(layer.path), "untrusted": True}
            for p in layer.ignored
        ]
    rules = [rule for rule in rules if rule["layer"] in shown]
    default = {"verdict": policy.default, "layer": policy.default_layer.name, "path": str(policy.default_layer.path)}
    if as_json:
        found = {"default": default, "timeout": policy.timeout, "rules": rules, "refused": list(policy.refused)}
        click.echo(json.dumps(found, ensure_ascii=False))
        return EXIT_ALLOW
    click.echo(f"default: {policy.default} (from the {default['layer']} policy, {default['path']})")
    click.echo(f"timeout: {policy.timeout} s")
    for refused in policy.refused:
        click.echo(f"refused: {refused}")
    width = max((len(r["pattern"]) for r in rules), default=7)
    for rule in rules:
        where = f"{rule['layer']}: {rule['path']}"
        if rule.get("untrusted"):
            where += " (not applied: run `gatekeep trust` there to apply its allow rules)"
        click.echo(f"{rule['verdict']:<6} {visible(rule['pattern']):<{width}}  {where}")
        for exception in rule.get("except") or ():
            click.echo(f"{'':<6}   except {visible(exception)}")
    return EXIT_ALLOW


def rules_test(line: str, policy_file: str | None, as_json: bool) -> int:
    """Explain the verdict; no prompt, no audit record."""
    policy = load_policy(get_paths(), policy_file, current_directory())
    verdict = evaluate(line, policy)
    errors = [layer.error for layer in policy.layers if layer.error]
    if as_json:
        data = verdict_json(verdict)
        for entry, command in zip(data["commands"], verdict.commands, strict=True):
            entry["forms"] = [" ".join(f) for f in command.normalized.deny_forms]
            entry["allow_form"] = " ".join(command.normalized.allow_form) if command.normalized.allow_form else None
            entry["layer"] = command.rule.layer if command.rule else None
            entry["why"] = command.why
        posture = {"posture": policy.posture, "posture_layer": _layer_name(policy.posture_layer)}
        found = {"command": line, **data, **posture, "policy_errors": errors, "refused": list(policy.refused)}
        click.echo(json.dumps(found, ensure_ascii=False))
        return EXIT_ALLOW
    for error in errors:
        click.echo(f"policy: {error}; every line asks until it is fixed")
    for refused in policy.refused:
        click.echo(f"refused: {refused}")
    click.echo(f"verdict: {verdict.decision}: {verdict.reason}")
    click.echo(f"posture: {posture_line(policy)}")
    for n, command in enumerate(verdict.commands, 1):
        normalized = command.normalized
        click.echo(f"{n}. `{visible(command.text)}`  [{normalized.name or '-'}] -> {command.decision}, {command.why}")
        forms = ", ".join(f"`{visible(' '.join(f))}`" for f in normalized.deny_forms)
        click.echo(f"   deny/ask rules tried: {forms}")
        allow_form = f"`{visible(' '.join(normalized.allow_form))}`" if normalized.allow_form else "none"
        click.echo(f"   allow rules tried: {allow_form}")
    for suggestion in verdict.suggestions:
        click.echo(f"suggestion: gatekeep rules add '{visible(suggestion)}'")
    return EXIT_ALLOW


def _layer_name(layer) -> str | None:
    return None if layer is None else layer.name


def posture_line(policy) -> str:
    """`workspace (set by the built-in policy): allows what only reads, and …`"""
    from gatekeep.judge.posture import POSTURE_NAMES

    layer = policy.posture_layer
    where = f"set by the {layer.name} policy" if layer else "no policy sets one"
    floor = layer is not None and layer.name in FLOORS
    change = "can only make it stricter" if floor else "changes it"
    return f"{policy.posture} ({where}): {POSTURE_NAMES[policy.posture]}; `posture:` in your policy {change}"
