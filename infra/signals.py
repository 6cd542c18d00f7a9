"""Stop requests by signal for long-running loops that may run in-process (tests, `croupier
demo`, Click's test runner): the handlers last only as long as the loop."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def stop_on_signals(handler: Callable[[int, Any], None], *, install: bool = True) -> Iterator[None]:
    """SIGTERM and SIGINT call `handler` (a stop request) while the block runs; when it ends,
    however it ends, they get back the handlers they had. Without that a loop run in-process
    left Ctrl-C meaning "stop a loop that is gone": a later query in the same process could no
    longer be interrupted. Off the main thread (where Python cannot install handlers) or with
    `install` false, nothing changes."""
    previous: dict[signal.Signals, Any] = {}
    if install and threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _already_stopping(_signum: int, _frame: Any) -> None:
    """A stop requested while the process is already closing: nothing left to stop."""


def closing_after_stop() -> contextlib.AbstractContextManager[None]:
    """For a process's closing steps (the last commit, the lake's connection): a SIGTERM or
    Ctrl-C then has nothing left to stop, and must not cut the close short, which loses nothing
    (every write is a transaction) but made a run that had committed everything end "Aborted!"
    with exit 1. A close that hangs still yields to SIGKILL."""
    return stop_on_signals(_already_stopping)
