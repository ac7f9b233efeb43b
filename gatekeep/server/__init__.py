"""The warm checker: a process that stays running with gatekeep imported, whose workers decide
the hooks' lines, so that a check costs a small client instead of a whole Python start-up."""
