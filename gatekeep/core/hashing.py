"""SHA-256 without hashlib where CPython's own module is there.

hashlib starts OpenSSL: ~3 ms, which a check pays when it hashes anything (a
project file's trust, a policy's digest, a lock's name). CPython ships its
own SHA-256 module, which gives the same digest; hashlib serves other Pythons.
"""

from __future__ import annotations


def sha256(data: bytes = b""):
    """hashlib.sha256(data)."""
    try:
        from _sha256 import sha256 as new  # CPython 3.11 and older
    except ImportError:
        try:
            from _sha2 import sha256 as new  # CPython 3.12 and newer
        except ImportError:
            from hashlib import sha256 as new
    return new(data)
