"""What the client and the warm checker say to each other over their Unix socket.

One connection per check. A worker that takes it answers ACCEPTED at once (the
server, about to end, answers STALE instead); only then does the client send
its request, so that its descriptors never wait in the queue of a server that
does not answer. The request: the client's standard streams
and its current directory as descriptors (SCM_RIGHTS), and as bytes its
arguments, environment, umask, pid and parent pid, the encodings of its
streams, the call's id (the audit record's), and, for an agent hook, the event
the client has already read from its stdin: the worker reads it from the
request, so that a client whose worker dies still has it to decide with. A worker, forked for the connection, takes the client's place with
them: same descriptors, directory, environment and umask, so that it decides
exactly what the client would have decided itself. When done, the worker
replies RESULT and the exit code, or HANDED_BACK (the client decides the line
itself: a question, which needs the client's own terminal). The server, when
it reaps a worker, sends the worker's reply again (CRASHED for one killed),
which the client reads only if the worker did not send one.

Imported by the client on every line, before anything else of gatekeep: so it
uses posix, not os, whose import (with _collections_abc) costs a check about
0.1x Python's start-up under -S.
"""

import _socket
import posix
import sys

VERSION = b"gatekeep-server-2"
ACCEPTED, STALE, RESULT, HANDED_BACK, CRASHED = b"A", b"~", b"=", b"^", b"!"
HANDBACK_STATUS = 99  # the worker's exit status for HANDED_BACK; gatekeep's own codes are 0 to 2
MAX_REQUEST = 16 << 20  # an agent's event (at most MAX_EVENT_BYTES) with arguments and environment
MAX_EVENT_BYTES = 4 << 20  # agent_hook.MAX_EVENT_BYTES (a test keeps them equal): the client reads one more
DESCRIPTORS = 4  # stdin, stdout, stderr, the current directory
_INT = 4  # bytes per descriptor in SCM_RIGHTS (a C int)
MAX_PATH = 100  # a Unix socket's path is at most 107 bytes (Linux) or 103 (macOS)


def reply(status: int) -> bytes:
    """The reply for a worker's exit status (negative: killed by that signal)."""
    if status == HANDBACK_STATUS:
        return HANDED_BACK
    return RESULT + bytes([status]) if 0 <= status <= 255 else CRASHED


def socket_name(package: str | None = None) -> str:
    """One server per interpreter and copy of gatekeep (`package`: its directory, this one's by
    default): two installs of one user never share one."""
    package = package or __file__.rpartition("/")[0].rpartition("/")[0]
    key = f"{sys.executable}\0{package}".encode()
    digest = 0x811C9DC5  # FNV-1a: a name, not a secret (the directory is private); hashlib costs an import
    for byte in key:
        digest = ((digest ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{digest:08x}.sock"


def private(directory: str) -> bool:
    """Whether `directory` is a real directory of this user's that nobody else may enter or write.
    Raises FileNotFoundError when it does not exist."""
    found = posix.lstat(directory)
    is_directory = found.st_mode & 0o170000 == 0o040000  # stat.S_ISDIR, without the stat module
    return is_directory and found.st_uid == posix.getuid() and not found.st_mode & 0o077


def socket_path(directory: str, name: str) -> str:
    return f"{directory.rstrip('/')}/{name}"


def identity(path: str) -> tuple[int, int, int] | None:
    """Which file is at `path` (device, inode and change time: a new file may reuse an inode's
    number); None when there is none."""
    try:
        found = posix.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_ctime_ns


def unlink_if(path: str, seen: tuple[int, int, int] | None) -> None:
    """Remove the socket at `path` if it is still the file `seen` (identity): never one that
    another server has put in its place since."""
    if seen is not None and identity(path) == seen:
        try:
            posix.unlink(path)
        except OSError:
            pass


HEARTBEAT_SECONDS = 0.5  # how often a server's loop touches its lock file (and looks at its spare)
STALE_SECONDS = 3.0  # a server that has not touched it for this long is stopped or hung


def alive(path: str) -> bool:
    """Whether the server of the socket at `path` has touched its lock file (`path`.lock) in the
    last STALE_SECONDS: its loop is running, whatever keeps its lines waiting."""
    import time

    try:
        touched = posix.stat(f"{path}.lock").st_mtime
    except OSError:
        return False
    return 0 <= time.time() - touched < STALE_SECONDS


def address(directory: str, name: str) -> tuple[str, int | None]:
    """The path to bind or connect to `name` in `directory`, and a descriptor to close after:
    a path too long for a socket is reached through /proc/self/fd (Linux)."""
    path = socket_path(directory, name)
    if len(_encoded(path)) <= MAX_PATH:
        return path, None
    try:
        posix.stat("/proc/self/fd")
    except FileNotFoundError:
        raise OSError(f"the socket path {path} is too long") from None
    fd = posix.open(directory, DIRECTORY_FLAGS)
    return f"/proc/self/fd/{fd}/{name}", fd


# A directory opened to be passed or reached through, not read: O_PATH needs no permission (Linux)
DIRECTORY_FLAGS = getattr(posix, "O_PATH", posix.O_RDONLY) | posix.O_DIRECTORY | posix.O_CLOEXEC


def _encoded(text: str) -> bytes:
    """os.fsencode, without os."""
    return text.encode(sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())


def _decoded(data: bytes) -> str:
    """os.fsdecode, without os."""
    return data.decode(sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())


def peer_uid(sock) -> int | None:
    """The user at the other end of a connected socket (Linux); None where the system cannot say."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    credentials = sock.getsockopt(_socket.SOL_SOCKET, option, 3 * _INT)  # pid, uid, gid
    return int.from_bytes(credentials[_INT : 2 * _INT], sys.byteorder)


def encode_request(args: list[str], streams: list[tuple[str, str]], call_id: str, event: bytes | None) -> bytes:
    """The request's bytes: its fields separated by NUL, which neither arguments nor the
    environment hold, then the event (which may), each part preceded by its length."""
    umask = posix.umask(0o077)
    posix.umask(umask)
    fields = [VERSION, b"%d" % umask, b"%d" % posix.getpid(), b"%d" % posix.getppid()]
    fields.append(sys.getfilesystemencoding().encode())
    for encoding, errors in streams:
        fields += [encoding.encode(), errors.encode()]
    fields += [call_id.encode(), b"-" if event is None else b"+", b"%d" % len(args)]
    fields += [_encoded(arg) for arg in args]
    fields += [name + b"=" + value for name, value in posix.environ.items()]  # as it was at start-up
    text = b"\0".join(fields)
    payload = len(text).to_bytes(8, "big") + text + (event or b"")
    return len(payload).to_bytes(8, "big") + payload


FIXED_FIELDS = 14  # VERSION to the count of arguments


class Request:
    """A decoded request (receive_request)."""

    __slots__ = ("umask", "pid", "ppid", "fs_encoding", "streams", "call_id", "event", "args", "environ")

    def __init__(self, payload: bytes):
        size = int.from_bytes(payload[:8], "big")
        if len(payload) < 8 + size:
            raise ValueError("a request cut short")
        fields = payload[8 : 8 + size].split(b"\0")
        if fields[0] != VERSION:
            raise ValueError("another version of the request")
        if len(fields) < FIXED_FIELDS:
            raise ValueError("a request cut short")
        self.umask, self.pid, self.ppid = (int(field) for field in fields[1:4])
        self.fs_encoding = fields[4].decode()
        self.streams = [(fields[i].decode(), fields[i + 1].decode()) for i in (5, 7, 9)]
        self.call_id = fields[11].decode("ascii")
        if fields[12] not in (b"-", b"+"):
            raise ValueError("a request with no word on its event")
        self.event = payload[8 + size :] if fields[12] == b"+" else None
        if self.event is not None and len(self.event) > MAX_EVENT_BYTES + 1:
            raise ValueError("an event too large")
        count = int(fields[13])
        self.args = [_decoded(arg) for arg in fields[FIXED_FIELDS : FIXED_FIELDS + count]]
        if len(self.args) != count:
            raise ValueError("a request cut short")
        self.environ = {}
        for entry in fields[FIXED_FIELDS + count :]:
            name, equals, value = entry.partition(b"=")
            if not equals:
                raise ValueError("an environment entry without =")
            self.environ[name] = value


SOL_SOCKET, SCM_RIGHTS = _socket.SOL_SOCKET, _socket.SCM_RIGHTS


def packed(fds: list[int]) -> bytes:
    """Descriptors as SCM_RIGHTS carries them."""
    return b"".join(fd.to_bytes(_INT, sys.byteorder, signed=True) for fd in fds)


def descriptors(ancillary) -> list[int]:
    """The descriptors received in recvmsg's ancillary data."""
    fds = []
    for level, kind, rights in ancillary:
        if level == SOL_SOCKET and kind == SCM_RIGHTS:
            usable = len(rights) - len(rights) % _INT
            fds += [int.from_bytes(rights[i : i + _INT], sys.byteorder, signed=True) for i in range(0, usable, _INT)]
    return fds


def send_request(sock, payload: bytes, fds: list[int]) -> None:
    sent = sock.sendmsg([payload], [(SOL_SOCKET, SCM_RIGHTS, packed(fds))])
    if sent < len(payload):
        sock.sendall(payload[sent:])


def receive_request(sock) -> tuple[Request, list[int]]:
    """The request and the client's descriptors (stdin, stdout, stderr, current directory).
    Raises ValueError for anything else; every descriptor received is then closed."""
    data, ancillary, _flags, _address = sock.recvmsg(1 << 16, _socket.CMSG_SPACE(DESCRIPTORS * _INT))
    fds = descriptors(ancillary)
    try:
        if len(fds) != DESCRIPTORS or len(data) < 8:
            raise ValueError("a request without its descriptors")
        size = int.from_bytes(data[:8], "big")
        if size > MAX_REQUEST:
            raise ValueError("a request too large")
        chunks, have = [data[8:]], len(data) - 8
        while have < size:
            chunk = sock.recv(min(size - have, 1 << 20))
            if not chunk:
                raise ValueError("a request cut short")
            chunks.append(chunk)
            have += len(chunk)
        if have != size:
            raise ValueError("a request longer than it says")
        return Request(b"".join(chunks)), fds
    except BaseException:
        for fd in fds:
            posix.close(fd)
        raise
