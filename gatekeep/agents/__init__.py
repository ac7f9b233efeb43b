"""The agent edge: coding agents' hook protocols (hosts.py), their set-up (setup.py), and importing
Claude Code's permission rules (claude_rules.py)."""
