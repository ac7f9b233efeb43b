"""Stage 1, reading a line: the shell line becomes simple commands (parse.py, with bashlex and a
fallback reader), each word with what the shell may do to it (shellwords.py)."""
