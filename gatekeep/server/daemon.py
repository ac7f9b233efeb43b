"""The warm checker: gatekeep imported once, a worker forked for each line.

Started by a client that found none (client.py), in a session of its own with
its standard streams on /dev/null. It takes the lock beside its socket (one
server per socket; a second one ends at once) and writes its pid there, imports
the pipeline, loads the tool tables and bashlex's parser and judges a few lines
by the built-in policy (nothing that depends on a client), then listens on a
Unix socket in the user's private state directory (0700, the socket 0600).

A spare worker, forked ahead of each line, takes the connection itself, answers
ACCEPTED, hands the server a copy of the connection, receives the client's
request and takes the client's place (wire.py: descriptors, directory,
environment, umask), and runs the same code the client would (main.run), so
it decides exactly what the client would have decided; a question is handed
back. Its exit status is the reply, which it sends itself, and which the server
sends again when it reaps it (for a worker that could not: an agent hook's
deadline ends the process). A worker whose client hung up (Ctrl-C) is killed.

The server itself never reads what a client sends: only workers do, one line
each, in their own process, and nothing goes back from a worker to the server
but the connection. Only its own user's processes are answered (SO_PEERCRED
where the system has it; the directory's and socket's modes everywhere).

Its loop touches the lock file every wire.HEARTBEAT_SECONDS: a client whose line waits past
client.ACCEPT_SECONDS takes the socket away only from a server that has stopped doing so
(stopped or hung), never from one that is only slow (every core busy). A spare that is stopped
while a line waits for it is replaced.

It ends after IDLE_SECONDS without a line, within TICK_SECONDS when its socket is no longer the one
at its path (a client took it away from a server that did not answer), and when
any file of gatekeep it runs (its modules, its data, the interpreter) has
changed: the spare looks as it takes a line (~0.3 ms) and answers STALE, and the
server looks before it forks the next spare, so only a line already taken when
gatekeep changes is judged by the running one; the next is decided by its
client, which starts a new server. Files that change while the server imports
them end it before it listens. Whatever goes wrong in a spare or worker ends
that process there (never in the server's code after the fork), and its client
decides the line itself.
Policies are read by each worker, as by any check: an edit counts from the
next line.
"""

from __future__ import annotations

import io
import os
import sys

from gatekeep.server import wire

IDLE_SECONDS = 30 * 60
# how often an idle server looks at its socket path: a server whose socket or whole directory is
# gone (a removed state directory, a test's HOME) ends within this, and lets go of its lock
TICK_SECONDS = 5.0
REQUEST_SECONDS = 2.0  # for a worker to receive its request
LOCK_SECONDS = 1.0  # for the lock, held by a server that is ending
SPARE_AFTER_SECONDS = 0.02  # a line judged longer than this gets a spare beside it, for the next


def serve(directory: str) -> None:
    """Serve in `directory` until idle or stale; nothing is printed (the streams are /dev/null)."""
    try:
        os.setsid()
    except OSError:  # already a session leader: started with posix_spawn's setsid
        pass
    try:
        _serve(directory)
    except Exception as e:  # a bug in the server costs only speed: clients decide lines themselves
        from gatekeep.core.errorlog import internal_error_line

        internal_error_line(e)


def _serve(directory: str) -> None:

    os.makedirs(directory, mode=0o700, exist_ok=True)
    if not wire.private(directory):
        return
    os.chdir(directory)  # the socket is bound by its name: its full path may be too long for one
    name = wire.socket_name()
    lock = os.open(f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    if not _locked(lock):
        return  # another server has this socket
    os.ftruncate(lock, 0)
    os.write(lock, b"%d\n" % os.getpid())  # who holds it: `gatekeep doctor` and the tests read it
    before = Stamp()  # gatekeep's own files and data, as they are before they are imported
    _warm_up()
    stamp = Stamp()  # and the libraries the warm-up imported
    if before.changed():
        return  # changed while being imported (an upgrade under way): the next line starts a server
    listener = _listen(name)
    bound = wire.identity(listener.getsockname())
    try:
        Server(listener, name, bound, stamp, lock).run()
    finally:
        wire.unlink_if(name, bound)  # still this server's (the lock is held till it ends)
        listener.close()


def _locked(lock: int) -> bool:
    """Take the lock; a server that is ending (stale) lets go of it within LOCK_SECONDS."""
    import fcntl
    import time

    deadline = time.monotonic() + LOCK_SECONDS
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def _listen(name: str):
    import socket

    try:
        os.unlink(name)  # a socket left by a server that died; only the lock's holder gets here
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    umask = os.umask(0o077)
    try:
        listener.bind(name)
    finally:
        os.umask(umask)
    listener.listen(128)
    return listener


# Judged once by the built-in policy alone as the server starts, so that the modules a check
# imports as it goes, and the patterns it compiles on first use, are already in every worker.
WARM_UP_LINES = (
    "git status",
    "ls -la ~/src | grep -v x > /tmp/out",
    'for f in *.py; do echo "$f"; done && cat ~/.ssh/id_rsa',
    "sudo rm -rf build; bash -c 'npm run test'",
    "git commit -m \"$(cat <<'EOF'\nfix\nEOF\n)\"",
)


# What a spare judges to get ready: a plain line and one for bashlex. All of WARM_UP_LINES cost
# each spare 25 ms of CPU, for no more speed.
TOUCH_LINES = (WARM_UP_LINES[0], WARM_UP_LINES[2])


def _warm_up() -> None:
    """Import what a check and an agent hook use, and load what every check loads the same way
    whoever asks: the tool tables (package data, keyed by their text), bashlex's parser, and
    what judging a few lines by the built-in policy alone compiles. What a client's environment
    or directory decides (its policies, its project) is loaded by each worker, as by any check."""
    import gc

    import gatekeep.commands.agent_hook  # noqa: F401 - imported to be warm in every worker
    import gatekeep.commands.check  # noqa: F401
    import gatekeep.judge.yamlio  # noqa: F401 - the first check after a policy edit
    import gatekeep.main  # noqa: F401
    import gatekeep.record.audit  # noqa: F401
    from gatekeep.core.resources import DEFAULT_POLICY
    from gatekeep.judge.gate import evaluate
    from gatekeep.judge.policy import combine, read_layer
    from gatekeep.name.knowledge import load_knowledge, load_table
    from gatekeep.read.bashlex_loader import load
    from gatekeep.record.decision import user_name

    load()
    load_knowledge()
    load_table()
    user_name()
    global _built_in
    _built_in = combine([read_layer("built-in", DEFAULT_POLICY, required=True)])
    for line in WARM_UP_LINES:
        evaluate(line, _built_in, "/")
    gc.collect()
    gc.freeze()  # workers share these pages with the server; the collector would write to them


_built_in = None  # the built-in policy alone, read by _warm_up; a spare falls back on it


class Stamp:
    """The files the server runs: every module it imported from outside the standard library,
    gatekeep's data, and the interpreter. Changed when any of them is (a new version, an edit)."""

    def __init__(self) -> None:
        import sysconfig

        from gatekeep.core import resources

        library = {sysconfig.get_path(name) for name in ("stdlib", "platstdlib")}
        files = {sys.executable}
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if path and not any(path.startswith(prefix + os.sep) for prefix in library if prefix):
                files.add(path)
        for top, _dirs, names in os.walk(resources.PACKAGE_DIR):
            files.update(os.path.join(top, name) for name in names if not name.endswith(".pyc"))
        for data in ("tools", "shell", "agents"):
            try:
                where = resources.data_dir(data)
            except FileNotFoundError:
                continue
            for top, _dirs, names in os.walk(where):
                files.update(os.path.join(top, name) for name in names)
        self.files = sorted(files)
        self.seen = self._now()

    def _now(self) -> list:
        found = []
        for path in self.files:
            try:
                info = os.stat(path)
                found.append((info.st_mtime_ns, info.st_size, info.st_ino))
            except OSError:
                found.append(None)
        return found

    def changed(self) -> bool:
        return self._now() != self.seen


class Server:
    """The loop. A spare worker is forked ahead of each line: it touches what a check touches
    (copying those pages from the server) when no line comes, and waits on the listening socket
    itself, so that a line wakes one process. It answers its client at once, hands the server a
    copy of the connection and judges the line. The server looks at the stamp and forks the next
    spare when the line is judged, or beside it if that takes longer than SPARE_AFTER_SECONDS. A
    worker's exit status is sent back when it ends, in case it could not answer itself, and a
    worker whose client hung up is killed."""

    def __init__(self, listener, name: str, bound: tuple[int, int, int] | None, stamp: Stamp, lock: int) -> None:
        self.listener, self.name, self.bound, self.stamp = listener, name, bound, stamp  # bound: the socket's file
        self.private_fds = [lock]  # and the wake-up pipe: the server's, closed in every worker
        self.workers: dict[int, object] = {}  # pid -> the client's connection
        self.by_connection: dict[object, int] = {}
        self.spare: tuple[int, object] | None = None  # its pid, and the server's end of its channel
        self.ending = False

    def run(self) -> None:
        import select
        import signal
        import time

        wake_read, wake_write = os.pipe()
        self.private_fds += [wake_read, wake_write]
        for fd in (wake_read, wake_write):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that the wake-up fd hears of it
        # poll, not select: a connection is watched for its hang-up alone (events 0; POLLHUP is
        # always reported), since it is readable while its request waits for the worker
        self.poll = select.poll()
        self.poll.register(wake_read, select.POLLIN)
        self.waiting = select.poll()  # the listener alone: whether a line waits for the spare
        self.waiting.register(self.listener, select.POLLIN)
        self._fork_spare()
        last = taken = beat = time.monotonic()
        try:
            while True:
                # No spare while a line is judged, for up to SPARE_AFTER_SECONDS: forking one and
                # looking at the stamp would take CPU from that line, on a machine of two cores
                wait = SPARE_AFTER_SECONDS if self.spare is None and self.workers else wire.HEARTBEAT_SECONDS
                ready = dict(self.poll.poll(wait * 1000))
                if time.monotonic() - beat >= wire.HEARTBEAT_SECONDS:
                    beat = time.monotonic()
                    self._beat()
                if wake_read in ready:
                    _drain(wake_read)
                if self.spare is not None and self.spare[1].fileno() in ready:
                    last = taken = time.monotonic()
                    self._handed_over()  # before reaping: the spare may have answered and ended
                self._reap()
                for connection in [c for c in self.by_connection if c.fileno() in ready]:
                    self._client_gone(connection)
                slow = time.monotonic() - taken >= SPARE_AFTER_SECONDS
                if self.spare is None and not self.ending and (not self.workers or slow):
                    self._next_spare()
                if self.workers:
                    continue
                if self.ending or time.monotonic() - last > IDLE_SECONDS or wire.identity(self.name) != self.bound:
                    return
        finally:
            self._end_spare()

    def _beat(self) -> None:
        """Touch the lock file (wire.alive reads it), and replace a spare that is stopped while a
        line waits for it (SIGSTOP; one that is only slow to be scheduled is left be)."""
        try:
            os.utime(self.private_fds[0])
        except OSError:
            pass
        if self.ending or self.spare is None:
            return
        if self.waiting.poll(0) and _stopped(self.spare[0]):
            self._end_spare()
            self._next_spare()

    def _fork_spare(self) -> None:
        import select
        import socket

        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            # Nothing after the fork may return into the server's code (its cleanup would remove the
            # socket, and `serve` would end with status 0, which the server replies as a verdict):
            # whatever goes wrong, the child ends here, and its client decides the line itself.
            status = wire.HANDBACK_STATUS
            try:
                for inherited in (mine, *self.by_connection):
                    inherited.close()
                for fd in self.private_fds:
                    os.close(fd)
                status = _spare(self.listener, its, self.stamp)
            finally:
                os._exit(status)
        its.close()
        self.spare = (pid, mine)
        self.poll.register(mine, select.POLLIN)

    def _end_spare(self, reaped: bool = False) -> None:
        import signal

        if self.spare is None:
            return
        pid, channel = self.spare
        self.spare = None
        self.poll.unregister(channel)
        channel.close()
        if reaped:  # its pid is free again: never signal it
            return
        try:
            os.kill(pid, signal.SIGKILL)  # waiting in accept(), or touching pages: nothing decided
        except ProcessLookupError:
            pass

    def _handed_over(self) -> None:
        """The spare took a line: it is now that line's worker, and the server gets the connection."""
        import socket

        pid, channel = self.spare
        self.spare = None
        self.poll.unregister(channel)
        try:
            _data, ancillary, _flags, _address = channel.recvmsg(1, socket.CMSG_SPACE(4))
        except OSError:
            ancillary = []
        finally:
            channel.close()
        fds = wire.descriptors(ancillary)
        if len(fds) != 1:  # the spare died before taking a line
            for fd in fds:
                os.close(fd)
            return
        connection = socket.socket(fileno=fds[0])
        self.workers[pid] = connection
        self.by_connection[connection] = pid
        self.poll.register(connection, 0)

    def _next_spare(self) -> None:
        """A spare for the next line, unless gatekeep has changed: then the lines waiting get
        STALE, decide themselves and start a new server. (A line taken before the change was
        seen is judged by the running gatekeep, as it would have been a moment earlier.)"""
        if not self.stamp.changed():
            self._fork_spare()
            return
        self.ending = True
        wire.unlink_if(self.name, self.bound)  # the next client finds none, and starts one
        self._refuse_waiting()

    def _refuse_waiting(self) -> None:
        """Answer STALE to the connections already waiting, and stop listening."""

        self.listener.setblocking(False)
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                break
            _send(connection, wire.STALE)
            connection.close()
        self.listener.close()

    def _reap(self) -> None:

        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.spare is not None and self.spare[0] == pid:  # died before taking a line
                self._end_spare(reaped=True)
                continue
            connection = self.workers.pop(pid, None)
            if connection is None:
                continue
            del self.by_connection[connection]
            try:
                self.poll.unregister(connection)
            except KeyError:  # already, when its client hung up
                pass
            _send(connection, wire.reply(os.waitstatus_to_exitcode(status)))
            connection.close()

    def _client_gone(self, connection) -> None:
        """The client hung up before its answer (Ctrl-C, killed): its line was blocked, and the
        worker must not go on to record a decision nobody acted on."""
        import signal

        self.poll.unregister(connection)  # reported until the worker is reaped otherwise
        pid = self.by_connection[connection]
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (Linux's /proc; elsewhere, never)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _send(connection, data: bytes) -> None:
    try:
        connection.setblocking(False)
        connection.send(data)
    except OSError:  # the client has gone; its line was blocked there
        pass


def _touch(listener) -> None:
    """Get ready for the next line: load the policy a line typed outside a project would have,
    by the server's environment (load_policy keeps the last one it loaded, by the exact text
    of its files: a client's own environment or project simply does not find it), and judge
    TOUCH_LINES by it, which compiles the rules they reach and copies the pages a check touches
    into this process: a worker's check then takes ~1.4 ms instead of ~4.9 ms (a 200-rule user
    policy). Spares are forked once the line before is judged, so this takes no CPU from it; a
    line that comes meanwhile waits for one step at most."""
    import select

    from gatekeep.core.paths import get_paths
    from gatekeep.judge.gate import evaluate
    from gatekeep.judge.policy import load_policy

    waiting = select.poll()
    waiting.register(listener, select.POLLIN)
    if waiting.poll(0):
        return
    try:
        policy = load_policy(get_paths(), None, "/")
    except Exception:  # noqa: BLE001 - a policy that does not load: the worker says why
        policy = _built_in
    for line in TOUCH_LINES:
        if waiting.poll(0):
            return
        evaluate(line, policy, "/")


def _spare(listener, channel, stamp: Stamp) -> int:
    """In a spare: touch what a check touches, then take a connection of this user's, answer it
    at once, hand the server a copy, and become its worker (_worker). Should gatekeep's files have
    changed since the server started, the line gets STALE instead: its client decides it with
    the new code, and the server, seeing its spare gone, ends."""
    import signal

    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        _touch(listener)
    except BaseException:  # noqa: BLE001 - only speed is at stake (a time limit's OutOfTime too)
        pass
    server = os.getppid()
    listener.settimeout(TICK_SECONDS)  # to see, now and then, that the server is still there
    while True:
        try:
            connection, _ = listener.accept()
        except (InterruptedError, TimeoutError):
            if os.getppid() != server:
                return 0  # the server was killed: a new one will listen on a new socket
            continue
        except OSError:
            return 0
        uid = wire.peer_uid(connection)
        if uid is None or uid == os.getuid():
            break
        connection.close()  # only its own user's lines (the directory keeps others out already)
    listener.close()
    try:
        connection.settimeout(REQUEST_SECONDS)
        if stamp.changed():  # ~0.3 ms: an upgrade that fixes a bypass counts from the very next line
            connection.sendall(wire.STALE)
            return wire.HANDBACK_STATUS
        connection.sendall(wire.ACCEPTED)  # by the worker, so that it always comes before the reply
        channel.sendmsg([b"c"], [(wire.SOL_SOCKET, wire.SCM_RIGHTS, wire.packed([connection.fileno()]))])
    except OSError:  # the client or the server has gone: the client decides the line itself
        return wire.HANDBACK_STATUS
    channel.close()
    return _worker(connection)


def _worker(connection) -> int:
    """In the forked worker: take the client's place, run its command, give the exit status."""
    from gatekeep.main import devnull_over

    try:
        request, fds = wire.receive_request(connection)
    except Exception:  # noqa: BLE001 - whatever came is not a request (cut short, another version)
        return wire.HANDBACK_STATUS
    try:
        status = _as_client(request, fds)
    except BaseException:  # noqa: BLE001 - nothing is known to have been decided: the client decides
        status = wire.HANDBACK_STATUS
    # The client's streams are let go first: a shell reading the client's output (bash's PS0
    # runs it in a command substitution) waits for every copy to close. Then the client has its
    # answer before this process is torn down; the server's own reply, when it reaps the worker,
    # comes too late to be read. A worker that ends otherwise (an agent hook's deadline ends the
    # process) is answered by the server alone.
    devnull_over((0, 1, 2))
    _send(connection, wire.reply(status))
    return status


def _as_client(request, fds: list[int]) -> int:
    from gatekeep.core import process
    from gatekeep.core.errors import HandBack
    from gatekeep.main import output_closed, run

    if request.fs_encoding != sys.getfilesystemencoding():
        return wire.HANDBACK_STATUS  # file names would read differently here
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    os.fchdir(fds[3])
    for fd in fds:
        os.close(fd)
    os.umask(request.umask)
    os.environ.clear()
    for name, value in request.environ.items():
        os.environb[name] = value
    process.answer_for(request.pid, request.ppid)
    process.answer_call(request.call_id)
    (in_encoding, in_errors), out, err = request.streams
    if request.event is None:
        sys.stdin = open(0, encoding=in_encoding, errors=in_errors, closefd=False)  # noqa: SIM115
    else:  # an agent hook's event, which the client read (and keeps, should this worker die)
        sys.stdin = io.TextIOWrapper(io.BytesIO(request.event), encoding=in_encoding, errors=in_errors)
    sys.stdout = io.TextIOWrapper(_Held(1), encoding=out[0], errors=out[1])
    sys.stderr = io.TextIOWrapper(_Held(2), encoding=err[0], errors=err[1])
    try:
        code = run(request.args, own_process=True, questions=False, plain_only=True)
    except HandBack:
        return wire.HANDBACK_STATUS
    if code is None:
        return wire.HANDBACK_STATUS
    # Written only now, whole: a line handed back has shown nothing, and the client starts over.
    try:
        _release(sys.stdout)
    except OSError:  # nobody reads it: say so on stderr as main.run would, and a gate blocks
        _release_quietly(sys.stderr)
        sys.stderr = open(2, "w", 1, encoding=err[0], errors=err[1], closefd=False)  # noqa: SIM115 - line-buffered
        return output_closed(request.args, code)
    _release_quietly(sys.stderr)
    return code


class _Held(io.BytesIO):
    """Output kept until the worker is done with the line; isatty and fileno are the client's stream's."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return os.isatty(self.fd)


def _release(stream) -> None:
    """Write what `stream` (over a _Held) holds to the client's descriptor."""
    stream.flush()
    view = memoryview(stream.buffer.getvalue())
    while view:
        view = view[os.write(stream.buffer.fd, view) :]
    stream.buffer.seek(0)
    stream.buffer.truncate()


def _release_quietly(stream) -> None:
    try:
        _release(stream)
    except OSError:  # stderr closed: the exit code alone says it
        pass
