"""gatekeep: a permission gate for the shell.

gatekeep runs as a new process before every line and every agent tool call, and
compiling its modules costs that process several times its own run time. So it
writes its compiled files (__pycache__) even when PYTHONDONTWRITEBYTECODE is set,
as it is in many containers (issue 18): that setting would otherwise make every
check compile gatekeep again (measured: 80-120 ms a check instead of 20-30). The
files go beside gatekeep's own modules and the libraries it imports, as pip and
`make install` would have put them; nothing else runs in a gatekeep process.
"""

import sys

sys.dont_write_bytecode = False

__version__ = "0.1.0"
