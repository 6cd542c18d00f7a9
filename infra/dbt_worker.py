"""dbt in a process of its own that stays between builds, so a builder pays dbt's start-up once.

`dbt build` as a command spends about 3 s before its first model, every time: importing dbt
(~1.8 s), parsing the project (even a partial parse reads and writes the whole manifest) and
building its configuration schemas. A `DbtWorker` runs dbt through its Python API
(`dbtRunner`) in a child process that imports dbt once, parses the project once and hands every
command a copy of that parse's nodes (dbt writes the compiled SQL into the nodes it is handed,
so the same nodes are never handed over twice). What a command depends on decides whether
the child may serve it: the caller's `key` (infra/marts.py: the project's folder and files, the
repository's packages the models import and read, the installed dbt and DuckDB, the environment
but for the values read only while dbt runs, such as which lake and which marts store: one
child builds any lake into any store). A new key starts a new child; so does a child that
served RECYCLE_AFTER commands, or one that died.

The child reads requests as JSON lines on its stdin and answers each with its exit code on the
pipe it was given; dbt's own output goes to the stdout and stderr it inherited, as a `dbt`
command's would. Its stdin is its lifeline: the builder holds the only other end, so when the
builder dies, however, the child ends too, a build in flight with it (no build outlives a
killed builder); and it leaves Ctrl-C to the builder, which kills it with the build in flight.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from queue import Queue
from typing import IO, Any

# Commands one child serves before it is replaced: bounds whatever dbt keeps between
# invocations (it was made to run once per process).
RECYCLE_AFTER = 50


class DbtWorkerError(RuntimeError):
    """The dbt process died, could not start, or ran past its time and was killed."""


class DbtWorker:
    """dbt commands run in one long-lived child process (`run`), restarted when the key changes.
    Use as a context manager, or `close()` it."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[bytes] | None = None
        self._replies: IO[bytes] | None = None
        self._key: str | None = None
        self._served = 0

    @property
    def pid(self) -> int | None:
        """The dbt process's, while there is one."""
        return self._child.pid if self._child is not None else None

    def __enter__(self) -> DbtWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        args: Sequence[str],
        *,
        parse: Sequence[str],
        env: Mapping[str, str],
        key: str,
        timeout: float | None = None,
    ) -> int:
        """Run `dbt <args>` with `env` as its whole environment; `parse`: the arguments of
        `dbt parse` that read this project (project, profiles, target and log paths), used by
        a new child only: `key` tells apart the commands another parse would serve. Returns
        dbt's exit code: 0 passed, 1 a model or test failed, 2 dbt could not run. A command
        that has not answered within `timeout` seconds (a hung dbt, a lock never released) is
        killed with its process, and raises DbtWorkerError; the next command starts another."""
        if self._child is not None and (
            key != self._key or self._served >= RECYCLE_AFTER or self._child.poll() is not None
        ):
            self.close()  # a new key, its builds served, or it died since its last build
        if self._child is None:
            self._start(key)
        child, replies = self._child, self._replies
        assert child is not None and child.stdin is not None and replies is not None
        request = json.dumps({"args": list(args), "parse": list(parse), "env": dict(env)})
        try:
            child.stdin.write(request.encode() + b"\n")
            child.stdin.flush()
            if timeout is not None and not select.select([replies], [], [], timeout)[0]:
                self.close(kill=True)
                raise DbtWorkerError(
                    f"dbt ran longer than {timeout:g} s: killed, with the command in flight"
                )
            reply = replies.readline()
        except OSError:  # its end of the pipe is closed: it is gone
            reply = b""
        except BaseException:  # interrupted, or past its time: the build goes with the child
            self.close(kill=True)
            raise
        self._served += 1
        if not reply:
            code = child.wait()
            self.close()
            raise DbtWorkerError(f"the dbt process died (exit {code}) before it answered")
        return int(reply)

    def _start(self, key: str) -> None:
        read, write = os.pipe()
        try:
            self._child = subprocess.Popen(
                [sys.executable, "-m", "infra.dbt_worker", str(write)],
                stdin=subprocess.PIPE,
                pass_fds=(write,),
            )
        except OSError as exc:
            os.close(read)
            raise DbtWorkerError(f"cannot start dbt: {exc}") from None
        finally:
            os.close(write)
        self._replies = os.fdopen(read, "rb")
        self._key = key
        self._served = 0

    def close(self, *, kill: bool = False) -> None:
        """End the child: at once with `kill` (a command in flight), else once it has read the
        end of its input (it has none in flight)."""
        child = self._child
        if child is None:
            return
        try:
            if kill:
                child.kill()
            elif child.stdin is not None:
                child.stdin.close()
            child.wait(timeout=None if kill else 10)
        except (OSError, subprocess.TimeoutExpired):
            child.kill()
            child.wait()
        finally:
            self._drop()

    def _drop(self) -> None:
        if self._child is not None and self._child.stdin is not None:
            with contextlib.suppress(OSError):
                self._child.stdin.close()
        if self._replies is not None:
            self._replies.close()
        self._child = self._replies = None
        self._key = None


def _requests(queue: Queue[bytes | None], busy: threading.Event) -> None:
    """Hand the requests on stdin to the main thread; at its end, the builder closed it or
    died: with a command in flight (or dbt still loading) this process ends at once."""
    for line in sys.stdin.buffer:
        queue.put(line)
    queue.put(None)
    if busy.is_set():
        os._exit(1)


def _serve(replies: int) -> None:
    queue: Queue[bytes | None] = Queue()
    busy = threading.Event()
    busy.set()
    threading.Thread(target=_requests, args=(queue, busy), daemon=True).start()
    try:
        from dbt.cli.main import dbtRunner
    except ImportError as exc:
        print(f"error: dbt is not installed beside {sys.executable} (run `uv sync`): {exc}")
        sys.exit(2)
    parsed: Any = None  # the project as parsed, never handed over (the same for every request)
    while True:
        busy.clear()
        line = queue.get()
        if line is None:
            return
        busy.set()
        request = json.loads(line)
        os.environ.clear()
        os.environ.update(request["env"])
        if parsed is None:
            result = dbtRunner().invoke(["parse", *request["parse"], "--quiet"])
            _close_duckdb()
            if not result.success:
                os.write(replies, b"2\n")
                continue
            parsed = result.result
        result = dbtRunner(manifest=_copy(parsed)).invoke(request["args"])
        _close_duckdb()
        code = 0 if result.success else 1 if result.exception is None else 2
        os.write(replies, f"{code}\n".encode())


def _copy(parsed: Any) -> Any:
    """The parse for one command: its nodes (what running compiles into: compiled SQL, the
    ephemeral models' CTEs) copied, the rest shared. (dbt 1.11's own copies of a manifest
    break it: pickling shifts its fields by one, `Manifest.deepcopy` fails on disabled nodes.)"""
    return dataclasses.replace(
        parsed, nodes={key: copy.deepcopy(node) for key, node in parsed.nodes.items()}
    )


def _close_duckdb() -> None:
    """dbt-duckdb keeps its DuckDB instance (the lake and marts attached) in a class attribute
    across invocations: it is closed once a command ends, so that the next command gets a new
    one, as a `dbt` process would, and that between builds this process holds no file of the
    lake or the marts open, nor the last build's cache in memory."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    env = DuckDBConnectionManager._ENV
    DuckDBConnectionManager._ENV = None
    if env is not None:
        env.close()


if __name__ == "__main__":
    # Ctrl-C is the builder's to handle: it kills this process with the build in flight
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _serve(int(sys.argv[1]))
