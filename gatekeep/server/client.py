"""`gatekeep ARGS` as the hooks and the console script start it: a gate's arguments go to the warm
checker when one is running; everything else, and every gate it cannot answer, runs here.

A check that the warm checker answers costs this process's start-up, one connection and a
worker's few milliseconds, instead of importing the whole pipeline (docs/speed.md). The
client falls back on deciding the line itself, as gatekeep always did, whenever the server
is absent, stale, slow to accept, refuses, crashes or hands the line back (a question, which
needs this process's own terminal); so the server can make a check faster, never looser.
After deciding a line itself because no server was running, it starts one for the next line.

The hooks pass the server's directory as it was when they were printed (shells/hook.py), so
that a served check imports neither os nor gatekeep's paths: the directory is only where
client and server meet; what the line is judged by comes from the client's environment.

An agent hook's event is read here, before the server is asked, and sent with the request:
should the worker die after it took the line, the client still has the event and decides with
it. Each served call has an id, sent too: the worker's audit record takes it, and a client that
decides a line whose worker died records it only if the worker had not (core/process.py), so a
call is recorded exactly once.

GATEKEEP_SERVER=off keeps every check in its own process (the test suite sets it, except
where it tests the server).
"""

import io  # already loaded by the interpreter for its standard streams
import posix
import sys

GATES = ("check", "agent-hook", "claude-hook")  # the commands whose exit code is a verdict
AGENT_GATES = ("agent-hook", "claude-hook")  # the gates that read an event on stdin
ACCEPT_SECONDS = 2.0  # a server that has not taken the request by then is stuck: decide here
# A worker that has not answered by then is stopped or waiting on something (an agent's event on
# a pipe that never ends): hang up, which makes the server kill it before it records, and decide
# here, where an agent hook has its own deadline (agent_hook.DEADLINE_SECONDS): together well under
# the 30 s a host gives a hook, past which most hosts let the tool call through.
REPLY_SECONDS = 12.0
# For a host to write its event and close the pipe (hosts do it at once): a host that keeps it open
# gets its line decided here, where the hook's own deadline (agent_hook.DEADLINE_SECONDS) denies it.
EVENT_SECONDS = 5.0


class _Absent(Exception):
    """No server answers for this copy of gatekeep: start one after this line."""


class _Late(Exception):
    """The event did not end within EVENT_SECONDS."""


class Call:
    """One gate's call: its id, the event read from stdin (agent gates), and whether a worker
    took it without handing it back (it may then have recorded it before it died)."""

    def __init__(self, agent: bool) -> None:
        self.id = _new_id()
        self.event: bytes | None = None
        self.complete = True  # the whole event was read (or there is none)
        self.taken = False
        if agent:
            self.event, self.complete = _read_event()

    def decide_here(self) -> None:
        """Before this process decides the line itself: the event read so far becomes stdin
        again, and the record takes the call's id (once only, when a worker may have written it)."""
        if self.event is not None:
            raw = io.BufferedReader(_Replay(self.event, reading=not self.complete))
            stream = sys.stdin
            sys.stdin = io.TextIOWrapper(raw, encoding=stream.encoding, errors=stream.errors)
        if self.taken:
            from gatekeep.core import process

            process.answer_call(self.id, again=True)


def main(server_dir: str | None = None) -> int:
    """Run `gatekeep` with sys.argv; `server_dir` is where the warm checker is, None to find it."""
    args = sys.argv[1:]
    absent = False
    call = None
    if args[:1] and args[0] in GATES and posix.environ.get(b"GATEKEEP_SERVER") != b"off":
        try:
            call = Call(args[0] in AGENT_GATES)
            code = served(args, call, server_dir) if call.complete else None
        except _Absent:
            absent, code = True, None
        except KeyboardInterrupt:
            from gatekeep.main import interrupted

            print("gatekeep: interrupted", file=sys.stderr)
            return interrupted(args)
        except Exception:  # noqa: BLE001 - anything else (no descriptor left, a sandbox): decide here
            code = None  # never Python's exit 1, which an agent host reads as "go ahead"
        if code is not None:
            # The worker wrote to this process's streams itself; this process wrote nothing, and
            # holds nothing to flush or close. Tearing the interpreter down would cost more than
            # the whole exchange with the server (~0.1x Python's start-up), so it is skipped.
            posix._exit(code)
    if call is not None:
        call.decide_here()
    from gatekeep.main import main as decide_here

    code = decide_here()
    if absent:  # after the line is decided; whatever happens there costs only speed, never its code
        try:
            start_server(server_dir)
        except Exception:  # noqa: BLE001
            pass
    return code


def served(args: list[str], call: Call, server_dir: str | None = None) -> int | None:
    """The server's exit code for `args`; None to decide here; _Absent when none is running."""
    from gatekeep.server import wire

    streams = (sys.stdin, sys.stdout, sys.stderr)
    if any(stream is None for stream in streams):
        return None
    directory = server_dir or _server_directory()
    if directory is None:
        return None
    try:
        if not wire.private(directory):
            return None
    except FileNotFoundError:
        raise _Absent from None
    except OSError:
        return None
    import _socket

    try:
        here = posix.open(".", wire.DIRECTORY_FLAGS)  # works in a removed directory too (Linux)
    except OSError:  # deciding here says why, if it matters
        return None
    try:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError:
        posix.close(here)
        return None
    try:
        return _exchange(sock, args, call, directory, here, [(s.encoding, s.errors) for s in streams])
    finally:
        sock.close()
        posix.close(here)


def _exchange(sock, args: list[str], call: Call, directory: str, here: int, encodings) -> int | None:
    from gatekeep.server import wire

    name = wire.socket_name()
    seen = wire.identity(wire.socket_path(directory, name))
    # From the connection on: a server that takes no connection leaves them in its queue, and
    # once that is full, a connect without a time limit would wait for ever.
    sock.settimeout(ACCEPT_SECONDS)
    try:
        path, directory_fd = wire.address(directory, name)
        try:
            sock.connect(path)
        finally:
            if directory_fd is not None:
                posix.close(directory_fd)
    except (FileNotFoundError, ConnectionRefusedError):
        raise _Absent from None
    except (TimeoutError, BlockingIOError):  # its queue is full
        _retire(wire.socket_path(directory, name), seen)
        return None
    except OSError:
        return None
    try:
        uid = wire.peer_uid(sock)
        if uid is not None and uid != posix.getuid():
            return None
        try:
            first = sock.recv(1)
        except TimeoutError:
            _retire(wire.socket_path(directory, name), seen)
            return None
        if first == wire.STALE:
            raise _Absent
        if first != wire.ACCEPTED:
            return None
        # Only now, with a worker on the other end: descriptors sent to a stuck server would stay
        # open in its socket's queue, and the shell reading this process's output would wait on them.
        request = wire.encode_request(args, encodings, call.id, call.event)
        call.taken = True  # from the first byte sent: a worker may take the call, and record it
        wire.send_request(sock, request, [0, 1, 2, here])
        sock.settimeout(REPLY_SECONDS)  # (a TimeoutError, an OSError: decided here)
        reply = sock.recv(2)
        if len(reply) == 1:
            reply += sock.recv(1)
    except OSError:
        return None
    if len(reply) == 2 and reply[:1] == wire.RESULT:
        return reply[1]
    if reply == wire.HANDED_BACK:
        call.taken = False  # handed back before anything was recorded (a question)
    return None  # HANDED_BACK, CRASHED, or the server gone mid-line: decide here


def _new_id() -> str:
    """A version 4 UUID, as audit.new_id() makes them (a test keeps them alike)."""
    raw = bytearray(posix.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _read_event() -> tuple[bytes, bool]:
    """What stdin holds, up to one byte past wire.MAX_EVENT_BYTES (agent_hook says it is too
    large), and whether it ended within EVENT_SECONDS. A stdin that cannot be read: b"", True
    (the hook says the event is not JSON)."""
    import _signal  # signal's C module: `import signal` would load enum

    from gatekeep.server.wire import MAX_EVENT_BYTES

    def late(_signum, _frame):
        raise _Late

    chunks, size, complete = [], 0, True
    previous = _signal.signal(_signal.SIGALRM, late)
    try:
        _signal.setitimer(_signal.ITIMER_REAL, EVENT_SECONDS)
        while size <= MAX_EVENT_BYTES:
            chunk = posix.read(0, min(1 << 16, MAX_EVENT_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except _Late:
        complete = False
    except OSError:  # no stdin (closed), or one that cannot be read
        pass
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, previous)
    return b"".join(chunks), complete


class _Replay(io.RawIOBase):
    """Standard input again: `head`, then, when `reading`, the rest of fd 0."""

    def __init__(self, head: bytes, reading: bool) -> None:
        super().__init__()
        self.head, self.reading = head, reading

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            count = min(len(buffer), len(self.head))
            buffer[:count] = self.head[:count]
            self.head = self.head[count:]
            return count
        if not self.reading:
            return 0
        return posix.readv(0, [buffer])


def _retire(path: str, seen: tuple | None) -> None:
    """A server that takes no line in ACCEPT_SECONDS is busy (every core taken: lines wait for
    one) or stuck (stopped, hung). A stuck one has not touched its lock file for
    wire.STALE_SECONDS (its loop does, every wire.HEARTBEAT_SECONDS): take its socket away,
    unless it has been replaced since, so that the next line is not held up as this one was.
    Should the server go on, it sees its socket gone and ends; a new one starts once the stuck
    one has let go of its lock. A busy one keeps its socket: replacing it would add a cold start
    to a machine that has no time for one."""
    from gatekeep.server import wire

    if wire.alive(path):
        return
    wire.unlink_if(path, seen)


def _server_directory() -> str | None:
    from gatekeep.core.paths import server_dir

    return server_dir()


def start_server(server_dir: str | None = None) -> None:
    """Start the warm checker for the next line, detached from this terminal; whatever goes
    wrong costs only speed. The server runs as this process does (interpreter, sys.path,
    environment)."""
    import os

    directory = server_dir or _server_directory()
    if directory is None:
        return
    code = f"import sys; sys.path[:] = {sys.path!r}\nfrom gatekeep.server.daemon import serve\nserve({directory!r})"
    argv = [sys.executable, "-I", "-S", "-c", code]
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        os.posix_spawn(sys.executable, argv, os.environ, file_actions=quiet, setsid=True)
    except Exception:  # noqa: BLE001 - only speed is at stake (an environment entry without a name: ValueError)
        pass
