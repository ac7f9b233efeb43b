"""The built-in read-only set: commands allowed without a rule, because they only read.

Which forms only read is data: a tool's table in tools/*.toml says `read-only`,
and which of its options write or change state (knowledge.form_of). This
module adds what the data cannot see: the command word must be written bare
(`/bin/ls` is not in the set: a path can be anything), and no redirection may
write a file (`/dev/null` and the like are fine).
"""

from __future__ import annotations

from gatekeep.judge.writes import HARMLESS
from gatekeep.name.knowledge import form_of
from gatekeep.name.normalize import Normalized


def is_read_only(normalized: Normalized) -> bool:
    form = normalized.allow_form
    if not form or "/" in form[0]:
        return False
    if any(r.writes_file and r.target not in HARMLESS for r in normalized.command.redirects):
        return False
    return form_of(list(form)).read_only
