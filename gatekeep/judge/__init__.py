"""Stage 3, judging: the named commands against the layered policy (policy.py, match.py), the
built-in read-only set and protected paths, to one decision for the whole line (decide.py, gate.py)."""
