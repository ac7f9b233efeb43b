"""gatekeep: a permission gate for the shell."""

__version__ = "0.1.0"
