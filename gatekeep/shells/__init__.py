"""The shell edge: the bash and zsh hooks that hand each whole line to `gatekeep check`."""
