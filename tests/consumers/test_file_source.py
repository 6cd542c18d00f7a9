"""`croupier consume --file`: a recording settled through the same pipeline, into a real lake.

Same rows as the same messages in-process; a second run (or a copy, or stdin) adds nothing; a
run SIGKILLed midway and run again ends exactly as an uninterrupted one; bad lines become dead
letters; usage errors are clear and write nothing.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from consumers.file_source import (
    LINE_KEEP,
    FileReport,
    FileSource,
    LakeBusyError,
    lock_lake,
    message_key,
    open_recording,
    read_lines,
)
from consumers.pipeline import Pipeline, RawMessage
from consumers.sink import LakeSink, content_hashes
from croupier.cli import main
from infra import lake as lakes
from producers.simulator import Message
from tests.consumers.helpers import derived_hashes, lake_progress, night, open_lake

DATA = Path(__file__).parents[1] / "data"


def write_recording(path: Path, lines: list[bytes]) -> Path:
    """As `croupier simulate --out` writes it: each message, then a newline."""
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def topic_of(path: Path) -> str:
    return "file:sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def consume_file(
    lake: Path, recording: Path | str, *extra: str, stdin: bytes | None = None
) -> dict[str, Any]:
    """Run `croupier consume --file` as a subprocess; its JSON summary (exit code 0 asserted)."""
    result = subprocess.run(
        [sys.executable, "-m", "croupier", "consume", "--lake", str(lake), "--file",
         str(recording), *extra],
        input=stdin, capture_output=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]
    summary: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return summary


def in_process(
    messages: list[Message], root: Path, topic: str, offsets: list[int] | None = None
) -> None:
    """The same messages through the pipeline in-process, with the simulator's keys, at the
    same positions (line numbers, unless `offsets` says where each one is)."""
    sink = LakeSink(lakes.Lake(root=root))
    pipeline = Pipeline(sink)
    at = offsets if offsets is not None else range(len(messages))
    raw = [
        RawMessage(value=m.value, key=m.key.encode(), topic=topic, partition=0, offset=i)
        for m, i in zip(messages, at, strict=True)
    ]
    for start in range(0, len(raw), 5_000):
        pipeline.handle(raw[start : start + 5_000])
    pipeline.close()
    sink.close()


def lake_state(root: Path) -> tuple[dict[str, str], dict[str, int]]:
    """Content hashes (positions included) and the row count of every table, bookkeeping too."""
    con = open_lake(root)
    try:
        return content_hashes(con, positions=True), lakes.table_counts(con)
    finally:
        con.close()


def run_reporting(
    lake: Path, recording: Path, progress: Callable[[int, int], None]
) -> tuple[FileSource, FileReport, str]:
    """`recording` read in process into `lake` in batches of 500, `progress(lines done, lines
    in all)` called with each progress report: the source, its report and the topic."""
    sink = LakeSink(lakes.Lake(root=lake))
    pipeline = Pipeline(sink)
    with open_recording(recording) as opened:
        source = FileSource(
            pipeline, opened, batch_size=500, on_progress=lambda done: progress(done, opened.size)
        )
        try:
            report = source.run()
        finally:
            pipeline.close()
            sink.close()
    return source, report, opened.topic


@pytest.fixture(scope="module")
def small_night() -> list[Message]:
    return night(tables=1, hours=1, seed=11).messages


@pytest.fixture
def recording(tmp_path: Path, small_night: list[Message]) -> Path:
    return write_recording(tmp_path / "night.jsonl", [m.value for m in small_night])


def test_a_recording_settles_exactly_as_its_messages_in_process(
    tmp_path: Path, small_night: list[Message], recording: Path
) -> None:
    summary = consume_file(tmp_path / "file", recording)
    topic = topic_of(recording)
    assert summary["recording"] == topic
    assert summary["complete"] is True
    assert summary["lines"] == summary["committed"] == len(small_night)
    in_process(small_night, tmp_path / "local", topic)
    from_file, local = derived_hashes(tmp_path / "file"), derived_hashes(tmp_path / "local")
    assert from_file == local
    # Same topic and line numbers as offsets: the positions agree too.
    assert lake_state(tmp_path / "file")[0] == lake_state(tmp_path / "local")[0]
    assert int(from_file["settlements"].split(":")[0]) > 100
    assert int(from_file["dead_letters"].split(":")[0]) == summary["dead_letters"] > 0


def test_a_second_run_a_copy_or_stdin_of_the_same_recording_adds_nothing(
    tmp_path: Path, small_night: list[Message], recording: Path
) -> None:
    lake = tmp_path / "lake"
    consume_file(lake, recording)
    before = lake_state(lake)
    assert before[1]["main.violations"] > 0
    copy = tmp_path / "elsewhere" / "renamed.jsonl"
    copy.parent.mkdir()
    shutil.copy(recording, copy)
    runs = [
        consume_file(lake, recording),
        consume_file(lake, copy),
        consume_file(lake, "-", stdin=recording.read_bytes()),
    ]
    for summary in runs:
        assert summary["committed"] == 0
        assert summary["skipped"] == summary["lines"] == len(small_night)
        assert summary["complete"] is True
    assert lake_state(lake) == before


def test_a_night_in_several_recordings_settles_as_in_one(
    tmp_path: Path, small_night: list[Message]
) -> None:
    """A night recorded in parts, one after the other: each part numbers its lines from 0.
    Each table's state was versioned by line number, so after a short second part the third
    resumed from the state the longer first part left (the latest state is the highest
    version): rounds settled twice, others lost. The lake holds what one recording gives."""
    values = [m.value for m in small_night]
    half = len(values) // 2
    for n, part in enumerate((values[:half], values[half : half + 120], values[half + 120 :])):
        consume_file(tmp_path / "parts", write_recording(tmp_path / f"part{n}.jsonl", part))
    in_process(small_night, tmp_path / "whole", "whole")
    assert derived_hashes(tmp_path / "parts") == derived_hashes(tmp_path / "whole")


def test_stdin_is_one_more_path_to_the_same_recording(
    tmp_path: Path, small_night: list[Message], recording: Path
) -> None:
    summary = consume_file(tmp_path / "stdin", "-", stdin=recording.read_bytes())
    assert summary["file"] == "-"
    assert summary["recording"] == topic_of(recording)
    consume_file(tmp_path / "path", recording)
    assert lake_state(tmp_path / "stdin") == lake_state(tmp_path / "path")


def test_sigkill_midway_then_again_is_exactly_once(tmp_path: Path) -> None:
    messages = night(tables=2, hours=1, seed=5).messages
    path = write_recording(tmp_path / "night.jsonl", [m.value for m in messages])
    topic, lake = topic_of(path), tmp_path / "killed"
    command = [sys.executable, "-m", "croupier", "consume", "--lake", str(lake), "--file",
               str(path), "--batch-size", "150"]  # fmt: skip
    rng = random.Random(2)
    kills = 0
    for _ in range(6):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = lake_progress(lake, topic)
        deadline = time.monotonic() + 60
        while lake_progress(lake, topic) == start and time.monotonic() < deadline:
            if process.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 0.4))
        process.send_signal(signal.SIGKILL)
        process.wait()
        if lake_progress(lake, topic) >= len(messages):
            break
        kills += 1
        if kills >= 2:
            break
    assert kills >= 2, f"only {kills} kills landed mid-file"
    summary = consume_file(lake, path)
    assert summary["resumed_at_line"] > 0
    assert summary["skipped"] + summary["committed"] == len(messages)
    assert lake_progress(lake, topic) == len(messages)
    in_process(messages, tmp_path / "once", topic)
    assert lake_state(lake)[0] == lake_state(tmp_path / "once")[0]


def test_sigterm_commits_the_batch_in_hand_and_exits_128_plus_15(tmp_path: Path) -> None:
    # Long enough (hundreds of 150-line commits) that the signal lands mid-file.
    messages = night(tables=2, hours=4, seed=6).messages
    path = write_recording(tmp_path / "night.jsonl", [m.value for m in messages])
    topic, lake = topic_of(path), tmp_path / "lake"
    process = subprocess.Popen(
        [sys.executable, "-m", "croupier", "consume", "--lake", str(lake), "--file", str(path),
         "--batch-size", "150"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while lake_progress(lake, topic) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, err.decode()[-2000:]
    summary = json.loads(out.decode().strip().splitlines()[-1])
    assert summary["stopped_by"] == "SIGTERM" and summary["complete"] is False
    assert lake_progress(lake, topic) == summary["committed"]
    assert b"run the same command again" in err
    consume_file(lake, path)
    in_process(messages, tmp_path / "once", topic)
    assert lake_state(lake)[0] == lake_state(tmp_path / "once")[0]


def test_a_stop_that_comes_once_every_line_is_read_stops_nothing(
    tmp_path: Path, recording: Path, small_night: list[Message]
) -> None:
    """A SIGTERM that lands after the last line was read (here: with the final progress
    report, once everything is committed) cut nothing short: the run is complete, not
    "stopped by SIGTERM, run again to settle the rest" (a hostile tester's finding)."""

    def progress(done: int, size: int) -> None:
        if done == size:
            os.kill(os.getpid(), signal.SIGTERM)

    source, report, topic = run_reporting(tmp_path / "lake", recording, progress)
    assert source.stop_signal == signal.SIGTERM  # it did arrive, inside the run
    assert report.complete and report.stopped_by is None
    assert report.committed == len(small_night) == lake_progress(tmp_path / "lake", topic)


def test_the_first_of_two_signals_names_the_stop(
    tmp_path: Path, recording: Path, small_night: list[Message]
) -> None:
    """A SIGTERM and then a Ctrl-C while the run stops: it was stopped by SIGTERM (exit 143, as
    `--help` says: 128 + N of the signal that stopped it first), not by the last signal."""

    def progress(done: int, size: int) -> None:
        if done < size:
            for signum in (signal.SIGTERM, signal.SIGINT):
                os.kill(os.getpid(), signum)
                signal.pthread_sigmask(signal.SIG_BLOCK, [])  # runs the handler now

    _, report, topic = run_reporting(tmp_path / "lake", recording, progress)
    assert not report.complete and report.stopped_by == "SIGTERM"
    assert 0 < report.committed == lake_progress(tmp_path / "lake", topic) < len(small_night)


def test_bad_lines_become_dead_letters_and_the_rest_settles(
    tmp_path: Path, small_night: list[Message]
) -> None:
    corpus = [
        (base64.b64decode(e["b64"]), e["expect"])
        for e in json.loads((DATA / "bad_messages.json").read_text())
        # A line is keyed by its own table_id, so a key cannot disagree with it.
        if e["expect"] != "key_mismatch"
    ]
    corpus = [(raw, why) for raw, why in corpus if raw.rstrip(b"\r\n")]
    good = next(m.value for m in small_night if b'"round_id":"' in m.value)
    table_id = json.loads(good)["table_id"]
    own = [
        (b"this is not JSON", "invalid_json"),
        (good[: len(good) // 2], "invalid_json"),  # truncated
        (bytes(b for b in range(256) if b not in b"\r\n") * 3, "undecodable"),  # binary junk
        (b'{"table_id":"' + table_id.encode() + b'","pad":"' + b"x" * (3 << 20) + b'"}',
         "oversized"),
        (b"[1,2,3]", None),
        (b'{"table_id":42}', None),
    ]  # fmt: skip
    bad = corpus + own
    rng = random.Random(4)
    # (line, index of the night's message or None)
    mixed: list[tuple[bytes, int | None]] = [(m.value, i) for i, m in enumerate(small_night)]
    for raw, _ in bad:
        mixed.insert(rng.randrange(len(mixed) + 1), (raw, None))
    # Blank lines (skipped) and CRLF endings (the CR is not part of the message).
    mixed.insert(rng.randrange(len(mixed) + 1), (b"", None))
    mixed.insert(rng.randrange(len(mixed) + 1), (b"\r", None))
    lines = [line for line, _ in mixed]
    path = write_recording(tmp_path / "mixed.jsonl", lines)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n", 50))
    lake = tmp_path / "lake"
    summary = consume_file(lake, path)
    assert summary["complete"] is True and summary["truncated"] == 1
    assert summary["blank"] == 2
    assert summary["lines"] == len(lines)

    con = open_lake(lake)
    try:
        rows = con.execute(
            "SELECT raw, raw_size, reason, detail, message_key FROM dead_letters"
        ).fetchall()
    finally:
        con.close()
    by_raw = {bytes(raw): (size, reason, detail, key) for raw, size, reason, detail, key in rows}
    for raw, expected in bad:
        kept = raw[:LINE_KEEP]
        assert kept in by_raw, raw[:80]
        _, reason, detail, _ = by_raw[kept]
        assert reason and detail
        if expected is not None:
            assert reason == expected, (raw[:80], reason, detail)
    assert by_raw[good[: len(good) // 2]][3] == table_id.encode()  # still names its table
    assert by_raw[b"this is not JSON"][3] is None
    assert by_raw[own[3][0][:LINE_KEEP]][0] == LINE_KEEP

    # Every good line settled exactly as the night's messages alone, at the same positions.
    offsets = [number for number, (_, index) in enumerate(mixed) if index is not None]
    in_process(small_night, tmp_path / "clean", topic_of(path), offsets)
    mine, clean = lake_state(lake)[0], lake_state(tmp_path / "clean")[0]
    for table in ("events", "rounds", "settlements", "violations", "jackpot_ledger"):
        assert mine[table] == clean[table], table
    clean_dead = int(clean["dead_letters"].split(":")[0])
    assert len(rows) == summary["dead_letters"] == len(bad) + clean_dead


def test_cli_errors_are_clear_and_write_nothing(tmp_path: Path, recording: Path) -> None:
    runner = CliRunner()
    lake = tmp_path / "lake"

    def run(*args: str) -> Any:
        return runner.invoke(main, ["consume", "--lake", str(lake), *args])

    missing = run("--file", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2
    assert "does not exist" in missing.output
    folder = run("--file", str(tmp_path))
    assert folder.exit_code == 2
    assert "is a directory" in folder.output
    for option in (["--topic", "t"], ["--group", "g"], ["--workers", "2"],
                   ["--stop-when-idle", "3"]):  # fmt: skip
        both = run("--file", str(recording), *option)
        assert both.exit_code == 2, both.output
        assert f"cannot be combined with {option[0]}" in both.output
    unreadable = tmp_path / "locked.jsonl"
    unreadable.write_bytes(b"{}\n")
    unreadable.chmod(0)
    if not os.access(unreadable, os.R_OK):  # root reads anything
        result = run("--file", str(unreadable))
        assert result.exit_code == 2
        assert "not readable" in result.output
    assert not lake.exists()
    help_text = runner.invoke(main, ["consume", "--help"]).output
    assert "--file" in help_text and "recording" in help_text


def test_one_recording_ingestion_per_lake_at_a_time(tmp_path: Path) -> None:
    with lock_lake(tmp_path), pytest.raises(LakeBusyError, match="another"), lock_lake(tmp_path):
        pass
    with lock_lake(tmp_path):  # released
        pass


def test_a_long_line_is_cut_and_read_past_in_bounded_pieces() -> None:
    data = b"a\n" + b"x" * (3 * LINE_KEEP + 5) + b"\r\n\nlast"
    out = list(read_lines(io.BytesIO(data), len(data)))
    assert [(line[:3], taken, cut) for line, taken, cut in out] == [
        (b"a", 2, False),
        (b"xxx", 3 * LINE_KEEP + 7, True),
        (b"", 1, False),
        (b"las", 4, False),
    ]
    assert len(out[1][0]) == LINE_KEEP
    exact = b"y" * LINE_KEEP + b"\r\n"
    assert list(read_lines(io.BytesIO(exact), len(exact))) == [
        (b"y" * LINE_KEEP, len(exact), False)
    ]
    # Bytes appended after the recording was fingerprinted are not read.
    assert [line for line, _, _ in read_lines(io.BytesIO(b"one\ntwo\n"), 4)] == [b"one"]


@pytest.mark.parametrize(
    ("line", "key"),
    [
        (b'{"event_id":"e","event_type":"t","schema_version":1,"casino_id":"c",'
         b'"table_id":"PG-01","x":1}', b"PG-01"),
        (b'{ "table_id" : "PG-02" }', b"PG-02"),  # not canonical, still JSON
        (b'{"payload":{"table_id":"INNER"},"table_id":"OUTER"}', b"OUTER"),
        (b'{"event_id":"e","event_type":"t","schema_version":1,"casino_id":"c",'
         b'"table_id":"FIRST","table_id":"LAST"}', b"LAST"),  # a JSON reader keeps the last
        (b'{"event_id":"e","event_type":"t","schema_version":1,"casino_id":"c",'
         b'"table_id":"A","table\\u005fid":"B"}', b"B"),
        (b'{"table_id":"TR-01","seq":1,"occ', b"TR-01"),  # truncated: as `publish` keys it
        (b"[1,2]", None),
        (b'{"table_id":7}', None),
        (b'{"table_id":"\xff"}', b"\xff"),  # not UTF-8: not JSON, keyed as publish keys it
        (b"\x00\x01junk", None),
    ],
)  # fmt: skip
def test_message_key_is_the_table_id_a_json_reader_sees(line: bytes, key: bytes | None) -> None:
    assert message_key(line) == key


def test_a_consumer_that_stops_and_resumes_keeps_the_state_of_one_that_never_stopped(
    tmp_path: Path, small_night: list[Message]
) -> None:
    """Each table's last saved state after a stop and a resume (a new pipeline, its state read
    back from the lake) is the state of a run that never stopped. The range of plausible times
    was left out of the saved state: a resumed consumer started from an empty one, moved
    `last_at` at other events (a hostile tester saw TH-01 end on its drop count's time instead
    of its closing's) and checked other events' times strictly."""
    topic = "night"

    def states(root: Path) -> dict[str, dict[str, Any]]:
        sink = LakeSink(lakes.Lake(root=root))
        try:
            return sink.load_states()
        finally:
            sink.close()

    in_process(small_night, tmp_path / "once", topic)
    once = states(tmp_path / "once")
    assert once and all("time_range" in state for state in once.values())
    for stop in (400, 1_234, len(small_night) - 7):
        root = tmp_path / f"stopped-{stop}"
        for part in (slice(0, stop), slice(stop, None)):
            offsets = list(range(len(small_night))[part])
            in_process(small_night[part], root, topic, offsets)  # a new pipeline each part
        assert states(root) == once, stop
