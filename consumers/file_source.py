"""Offline ingestion: a recording fed through the same pipeline as the Kafka consumer, exactly once.

A recording is a file of JSON lines, one message per line, as `croupier simulate --out` writes
it. Positions work like Kafka offsets: the recording is a "topic" named after its content
(`file:sha256:` and the first 16 hex digits of the SHA-256 of its bytes), partition 0, and a
line's offset is its line number from 0. They commit with the rows and the table states, so a
second run of the same recording (from any path: the name is the content) skips every line the
lake already holds, and a run killed midway resumes at the first line not committed.

Lines: the trailing CR/LF is removed; a line left empty is skipped (it keeps its number, so
positions stay line numbers). Any other line becomes a message, whatever its bytes, so junk ends
in `dead_letters` with the processor's reason. A line longer than `LINE_KEEP` bytes is cut to
that many (a broker would have refused it; `dead_letters` keeps no more of a message) and the
rest is read past, never held in memory. There is no broker: `timestamp_ms` is None.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from pydantic_core import from_json

from consumers.pipeline import Pipeline, RawMessage
from events import MAX_EVENT_BYTES
from infra.signals import stop_on_signals

__all__ = [
    "LINE_KEEP",
    "TOPIC_PREFIX",
    "FileReport",
    "FileSource",
    "LakeBusyError",
    "Recording",
    "lock_lake",
    "message_key",
    "open_recording",
]

log = logging.getLogger("croupier.consumer")

TOPIC_PREFIX = "file:sha256:"
# Bytes of a line kept as its message: what `dead_letters.raw` stores of a message at most, and
# about the largest message a broker accepts by default.
LINE_KEEP = 1 << 20
# A batch is also cut at this many bytes, so a file of huge lines stays within bounded memory.
BATCH_BYTES = 64 << 20
_CHUNK = 1 << 20
_PROGRESS_EVERY = 16_384  # lines

# The contract's canonical envelope (as the simulator and `dump_event` write it) up to table_id.
_CANONICAL_KEY = re.compile(
    rb'\{"event_id":"[^"\\]*","event_type":"[^"\\]*","schema_version":\d+,'
    rb'"casino_id":"[^"\\]*","table_id":"([^"\\]{1,64})"'
)
# How `croupier publish` keys a line: the first `"table_id":"..."` in its bytes.
_ANY_KEY = re.compile(rb'"table_id":"([^"\\]{1,64})"')


def message_key(line: bytes) -> bytes | None:
    """The key a device would have sent this line with: its table_id, as UTF-8 bytes.

    A line that is JSON: its top-level `table_id` if that is a string, else None. A line that is
    not (truncated, garbled, oversized): the first `"table_id":"..."` in its bytes, as `croupier
    publish` keys it, so its dead letter still names the table; else None.
    """
    # Fast path, same answer: a canonical envelope with the only "table_id" in the line and no
    # escapes (so no other key can decode to "table_id") is the top-level table_id.
    match = _CANONICAL_KEY.match(line)
    if match is not None and b"\\" not in line and line.count(b'"table_id"') == 1:
        return match.group(1)
    if len(line) <= MAX_EVENT_BYTES:
        try:
            data = from_json(line)
        except Exception:  # not JSON (or absurdly nested): keyed as publish keys it, below
            pass
        else:
            if not isinstance(data, dict):
                return None
            table_id = data.get("table_id")
            return table_id.encode() if isinstance(table_id, str) else None
    match = _ANY_KEY.search(line)
    return match.group(1) if match is not None else None


class LakeBusyError(RuntimeError):
    """Another `consume --file` holds the lake."""


@contextlib.contextmanager
def lock_lake(root: Path) -> Iterator[None]:
    """One recording ingestion per lake at a time: two runs of the same file at once would both
    start from the same committed line and store its rows twice."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".consume-file.lock").open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            handle.seek(0)
            holder = handle.read().strip() or "?"
            raise LakeBusyError(
                f"another `croupier consume --file` (pid {holder}) is ingesting into {root}"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Recording:
    """A recording opened for reading: its name, topic (from its content) and size in bytes."""

    name: str
    topic: str
    size: int
    stream: IO[bytes]


@contextlib.contextmanager
def open_recording(path: Path | str) -> Iterator[Recording]:
    """Open and fingerprint a recording. `-` reads standard input, spooled to a temporary file
    (in $TMPDIR) first: the name comes from the whole content, before any line is committed."""
    with contextlib.ExitStack() as stack:
        digest = hashlib.sha256()
        if str(path) == "-":
            name = "-"
            stream: IO[bytes] = stack.enter_context(
                tempfile.TemporaryFile(prefix="croupier-recording-")
            )
            source = sys.stdin.buffer
            while chunk := source.read(_CHUNK):
                digest.update(chunk)
                stream.write(chunk)
            size = stream.tell()
        else:
            name = str(path)
            stream = stack.enter_context(Path(path).open("rb"))
            size = 0
            while chunk := stream.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
        stream.seek(0)
        yield Recording(name, TOPIC_PREFIX + digest.hexdigest()[:16], size, stream)


def read_lines(stream: IO[bytes], size: int) -> Iterator[tuple[bytes, int, bool]]:
    """(line without its CR/LF, bytes it took in the file, whether it was cut) for each line
    among the first `size` bytes; a line is cut to LINE_KEEP bytes and its rest read past."""
    readline = stream.readline
    left = size
    while left > 0:
        raw = readline(min(LINE_KEEP, left))
        if not raw:
            return
        consumed = len(raw)
        left -= consumed
        cut = False
        if consumed == LINE_KEEP and raw[-1:] != b"\n":
            # Longer than kept: read past the rest of the line in bounded chunks.
            while left > 0:
                rest = readline(min(_CHUNK, left))
                if not rest:
                    break
                consumed += len(rest)
                left -= len(rest)
                cut = cut or rest.rstrip(b"\r\n") != b""
                if rest[-1:] == b"\n":
                    break
        yield raw.rstrip(b"\r\n"), consumed, cut


@dataclass
class FileReport:
    """What one run did with a recording."""

    file: str
    recording: str
    resumed_at_line: int = 0
    lines: int = 0  # lines read, blank ones included
    blank: int = 0
    skipped: int = 0  # committed by an earlier run
    committed: int = 0  # messages committed by this run
    dead_letters: int = 0  # of those, how many became dead letters
    truncated: int = 0  # lines longer than LINE_KEEP
    complete: bool = False  # read to the end and everything committed
    stopped_by: str | None = None  # the signal that stopped it early
    seconds: float = 0.0
    _batches: list[int] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        data["seconds"] = round(self.seconds, 3)
        data["messages_per_second"] = (
            round(self.committed / self.seconds) if self.seconds > 0 else None
        )
        return data


class FileSource:
    """Reads a recording in batches and hands them to the pipeline, resuming where the lake says.

    A SIGTERM or SIGINT finishes the batch in hand, commits it, and stops (`stopped_by`)."""

    def __init__(
        self,
        pipeline: Pipeline,
        recording: Recording,
        *,
        batch_size: int = 20_000,
        on_progress: Callable[[int], None] | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.recording = recording
        self.batch_size = batch_size
        self.on_progress = on_progress
        self.stop_signal: int | None = None

    def request_stop(self, signum: int, _frame: FrameType | None = None) -> None:
        """The first signal stops the run and names its exit code (128 + N); later ones change
        nothing."""
        if self.stop_signal is None:
            self.stop_signal = signum

    def run(self, *, install_signal_handlers: bool = True) -> FileReport:
        with stop_on_signals(self.request_stop, install=install_signal_handlers):
            return self._run()

    def _run(self) -> FileReport:
        started = time.monotonic()
        recording, pipeline = self.recording, self.pipeline
        topic = recording.topic
        report = FileReport(file=recording.name, recording=topic)
        start = pipeline.sink.load_offsets(topic).get(0, 0)
        report.resumed_at_line = start
        # every table's state from this run must outrank the states of earlier runs, of this
        # recording or another, whose line numbers may be higher than this run's
        pipeline.processor.version_base = pipeline.sink.max_state_version() + 1
        if start:
            log.info("recording %s: lines before %d are in the lake already", topic, start)
        new = tuple.__new__
        batch: list[RawMessage] = []
        batch_bytes = 0
        read = 0
        number = -1
        lines = read_lines(recording.stream, recording.size)
        for number, (line, consumed, cut) in enumerate(lines):
            read += consumed
            if number % _PROGRESS_EVERY == 0 and self.on_progress is not None:
                self.on_progress(read)
            if not line:
                report.blank += 1
                continue
            if number < start:
                report.skipped += 1
                continue
            if cut:
                report.truncated += 1
                log.warning(
                    "line %d: %d bytes, only the first %d kept", number, consumed, LINE_KEEP
                )
            batch.append(new(RawMessage, (line, message_key(line), topic, 0, number, None)))
            batch_bytes += len(line)
            if len(batch) >= self.batch_size or batch_bytes >= BATCH_BYTES:
                self._handle(batch, report)
                batch, batch_bytes = [], 0
            if self.stop_signal is not None:
                break
        else:
            report.complete = True
        report.lines = number + 1
        if batch:
            self._handle(batch, report)
        pipeline.flush()
        self._collect(report)
        if self.on_progress is not None:
            self.on_progress(read)
        if self.stop_signal is not None and not report.complete:
            # a stop that came once every line was read cut nothing short: not "stopped"
            report.stopped_by = signal.Signals(self.stop_signal).name
        report.seconds = time.monotonic() - started
        return report

    def _handle(self, batch: list[RawMessage], report: FileReport) -> None:
        self.pipeline.handle(batch)
        report._batches.append(len(batch))
        self._collect(report)

    def _collect(self, report: FileReport) -> None:
        """Count the batches whose lake transaction has committed (oldest first)."""
        for result in self.pipeline.committed():
            report.committed += report._batches.pop(0)
            report.dead_letters += len(result.dead_letters)
