"""The settlement consumer against the real broker and a real lake on disk.

Kafka path = in-process path; SIGKILL at random moments loses and doubles nothing; replays are
identical; bad messages become dead letters and never stop it; a rebalance changes nothing;
readers and a CTAS job run while it writes.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer

from consumers.kafka_source import ConsumeOptions, GroupWatch, KafkaSource
from consumers.pipeline import Pipeline, RawMessage
from consumers.sink import LakeSink
from events import InvalidEvent, parse_event
from infra import lake as lakes
from producers.simulator import Message
from tests.consumers.helpers import (
    consumer_command,
    consumer_env,
    derived_hashes,
    lake_progress,
    night,
    open_lake,
    publish_raw,
    wait_for_progress,
)

pytestmark = pytest.mark.kafka

DATA = Path(__file__).parents[1] / "data"


def in_process(messages: list[Message], root: Path) -> None:
    sink = LakeSink(lakes.Lake(root=root))
    pipeline = Pipeline(sink)
    raw = [
        RawMessage(value=m.value, key=m.key.encode(), topic="local", partition=0, offset=i)
        for i, m in enumerate(messages)
    ]
    for start in range(0, len(raw), 5_000):
        pipeline.handle(raw[start : start + 5_000])
    pipeline.close()
    sink.close()


def assert_read_once(lake: Path, topic: str, messages: list[Message], single: Path) -> None:
    """The lake read every message of `topic` once: its offsets are at the end, and its derived
    tables hash equal to one in-process run of the same messages (into `single`)."""
    assert lake_progress(lake, topic) == len(messages)
    in_process(messages, single)
    assert derived_hashes(lake) == derived_hashes(single)


def source_in_thread(
    bootstrap: str, topic: str, lake: Path, options: dict[str, Any]
) -> tuple[KafkaSource, Pipeline, LakeSink, threading.Thread]:
    """A `KafkaSource` of a new group into `lake`, in process, and the thread to run it on."""
    sink = LakeSink(lakes.Lake(root=lake))
    pipeline = Pipeline(sink)
    options = {"group_id": f"g-{uuid.uuid4().hex[:8]}", "dead_letter_topic": None, **options}
    source = KafkaSource(
        pipeline, {"bootstrap.servers": bootstrap}, ConsumeOptions(topic=topic, **options)
    )
    reading = threading.Thread(target=source.run, kwargs={"install_signal_handlers": False})
    return source, pipeline, sink, reading


def consume_all(
    bootstrap: str, lake: Path, topic: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    group = f"g-{uuid.uuid4().hex[:8]}"
    result = subprocess.run(
        consumer_command(lake, topic, group, "--stop-when-idle", "4", "--adopt", *extra),
        env=consumer_env(bootstrap),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def unique_valid_ids(messages: list[Message]) -> set[str]:
    ids = set()
    for m in messages:
        with contextlib.suppress(InvalidEvent):
            ids.add(str(parse_event(m.value).event_id))
    return ids


@pytest.fixture(scope="module")
def small_night() -> list[Message]:
    return night(tables=2, hours=4, seed=3).messages


def test_kafka_path_equals_the_in_process_path(
    kafka_bootstrap: str, topic_name: str, small_night: list[Message], tmp_path: Path
) -> None:
    publish_raw(kafka_bootstrap, topic_name, small_night)
    consume_all(kafka_bootstrap, tmp_path / "kafka", topic_name)
    in_process(small_night, tmp_path / "local")
    kafka, local = derived_hashes(tmp_path / "kafka"), derived_hashes(tmp_path / "local")
    assert kafka == local
    assert int(kafka["settlements"].split(":")[0]) > 1_000


def test_two_replays_from_offset_zero_hash_identically(
    kafka_bootstrap: str, topic_name: str, small_night: list[Message], tmp_path: Path
) -> None:
    publish_raw(kafka_bootstrap, topic_name, small_night)
    outputs = []
    for name in ("one", "two"):
        result = subprocess.run(
            [sys.executable, "-m", "croupier", "replay", "--lake", str(tmp_path / name),
             "--topic", topic_name, "--idle", "4"],
            env=consumer_env(kafka_bootstrap), capture_output=True, text=True, timeout=600,
            check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1]
    assert int(outputs[0]["events"].split(":")[0]) == len(unique_valid_ids(small_night))


def test_sigkill_at_random_moments_loses_and_doubles_nothing(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    messages = night(tables=4, hours=10, seed=5).messages
    assert len(messages) > 150_000
    publish_raw(kafka_bootstrap, topic_name, messages)
    lake, group = tmp_path / "killed", f"g-{uuid.uuid4().hex[:8]}"
    rng = random.Random(1)
    kills = 0
    while kills < 10:
        process = subprocess.Popen(
            consumer_command(lake, topic_name, group, "--batch-size", "2000"),
            env=consumer_env(kafka_bootstrap),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Kill at a random moment after this run has committed something of its own.
        start = lake_progress(lake, topic_name)
        deadline = time.monotonic() + 120
        while lake_progress(lake, topic_name) == start and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(rng.uniform(0.0, 1.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        if lake_progress(lake, topic_name) >= len(messages):
            break
        kills += 1
    assert kills >= 10, f"only {kills} kills landed mid-run"
    consume_all(kafka_bootstrap, lake, topic_name)  # finish whatever the last kill left
    assert lake_progress(lake, topic_name) == len(messages)
    in_process(messages, tmp_path / "uninterrupted")
    assert derived_hashes(lake) == derived_hashes(tmp_path / "uninterrupted")


def test_sigterm_finishes_the_batch_and_exits_zero(
    kafka_bootstrap: str, topic_name: str, small_night: list[Message], tmp_path: Path
) -> None:
    publish_raw(kafka_bootstrap, topic_name, small_night)
    lake, group = tmp_path / "lake", f"g-{uuid.uuid4().hex[:8]}"
    process = subprocess.Popen(
        consumer_command(lake, topic_name, group, "--batch-size", "1000"),
        env=consumer_env(kafka_bootstrap),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while lake_progress(lake, topic_name) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err[-2000:]
    consume_all(kafka_bootstrap, lake, topic_name)
    in_process(small_night, tmp_path / "local")
    assert derived_hashes(lake) == derived_hashes(tmp_path / "local")


def test_malformed_corpus_becomes_dead_letters_and_valid_traffic_flows(
    kafka_bootstrap: str, topic_name: str, small_night: list[Message], tmp_path: Path
) -> None:
    corpus = json.loads((DATA / "bad_messages.json").read_text())
    assert len(corpus) >= 200
    rng = random.Random(7)
    mixed = list(small_night)
    bad_values: dict[bytes, str] = {}
    for entry in corpus:
        raw = base64.b64decode(entry["b64"])
        key = entry["key"] if entry["key"] is not None else "BAD-01"
        mixed.insert(rng.randrange(len(mixed) + 1), Message(key=key, value=raw))
        bad_values[raw] = entry["expect"]
    dead_topic = f"{topic_name}.dead"
    publish_raw(kafka_bootstrap, topic_name, mixed)
    lake = tmp_path / "lake"
    subprocess.run(
        consumer_command(lake, topic_name, f"g-{uuid.uuid4().hex[:8]}", "--stop-when-idle", "4"),
        env=consumer_env(kafka_bootstrap, dead_topic), check=True, timeout=600,
        capture_output=True,
    )  # fmt: skip
    con = open_lake(lake)
    rows = con.execute("SELECT raw, reason, detail FROM dead_letters").fetchall()
    by_raw = {bytes(raw): reason for raw, reason, _ in rows}
    for raw, expected in bad_values.items():
        assert by_raw.get(raw) == expected, (raw[:80], by_raw.get(raw), expected)
    assert all(detail for _, _, detail in rows)
    # Every valid event of the night is in the lake, and it is exactly the in-process result.
    in_process(small_night, tmp_path / "clean")
    mine, clean = derived_hashes(lake), derived_hashes(tmp_path / "clean")
    for table in ("events", "rounds", "settlements", "jackpot_ledger"):
        assert mine[table] == clean[table]
    # And a copy of each bad message went to the dead-letter topic.
    reader = Consumer(
        {
            "bootstrap.servers": kafka_bootstrap,
            "group.id": "dlq-check",
            "auto.offset.reset": "earliest",
        }
    )
    reader.subscribe([dead_topic])
    copies: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(copies) < len(rows) and time.monotonic() < deadline:
        for msg in reader.consume(num_messages=500, timeout=1.0):
            if msg.error() is None:
                copies.append(msg.value() or b"")
    reader.close()
    assert sorted(copies) == sorted(bytes(raw) for raw, _, _ in rows)


def test_rebalance_when_a_consumer_leaves_changes_nothing(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    messages = night(tables=3, hours=8, seed=9).messages
    publish_raw(kafka_bootstrap, topic_name, messages)
    lake, group = tmp_path / "shared", f"g-{uuid.uuid4().hex[:8]}"
    env = consumer_env(kafka_bootstrap)
    first = subprocess.Popen(
        consumer_command(lake, topic_name, group, "--batch-size", "1000"),
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    # No idle limit on the second: its own partitions may hold no message at all, and an idle
    # limit then ran out before the first had read a third of the night (a slow CI machine
    # stopped both with 60 % unread). It is stopped once the lake holds the whole topic.
    second = subprocess.Popen(
        consumer_command(lake, topic_name, group, "--batch-size", "1000"),
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_for_progress(lake, topic_name, len(messages) // 3)
    first.send_signal(signal.SIGTERM)  # leaves the group mid-run: its partitions move over
    _, err_first = first.communicate(timeout=120)
    wait_for_progress(lake, topic_name, len(messages))
    second.send_signal(signal.SIGTERM)
    _, err_second = second.communicate(timeout=120)
    assert first.returncode == 0, err_first[-2000:]
    assert second.returncode == 0, err_second[-2000:]
    assert "revoked" in err_first
    assert_read_once(lake, topic_name, messages, tmp_path / "single")


def test_a_batch_being_read_drops_the_messages_of_partitions_revoked_meanwhile(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A batch fills over several reads while the previous batch commits; a rebalance served in
    # one of those reads moves partitions away. Their messages already read must not be
    # processed here: the new owner reads them from the lake's offsets (a CI run processed
    # such messages twice and left a table's state behind: 200 settlements short).
    messages = night(tables=3, hours=2, seed=9).messages
    publish_raw(kafka_bootstrap, topic_name, messages)
    lake = tmp_path / "shared"
    first, pipeline, sink, reading = source_in_thread(
        kafka_bootstrap, topic_name, lake,
        {"batch_size": 1_000_000, "batch_wait_s": 8.0, "stop_when_idle_s": 8.0},
    )  # fmt: skip
    pipeline.idle = lambda: False  # type: ignore[method-assign]  # as while a commit is in flight
    caplog.set_level("INFO", logger="croupier.consumer")
    reading.start()
    deadline = time.monotonic() + 60
    while first._assigned_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.Popen(
        consumer_command(lake, topic_name, first.options.group_id, "--stop-when-idle", "6"),
        env=consumer_env(kafka_bootstrap), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    _, err = second.communicate(timeout=600)
    reading.join(600)
    pipeline.close()
    sink.close()
    assert second.returncode == 0, err[-2000:]
    assert any(r.getMessage() == "revoked" for r in caplog.records)  # mid-batch, here
    assert_read_once(lake, topic_name, messages, tmp_path / "single")


STALLED = "consumer group membership stalled: a new client joins in its place"


def test_a_stalled_group_membership_gets_a_new_client_and_loses_or_doubles_nothing(
    kafka_bootstrap: str,
    topic_name: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # After a broker restart librdkafka left a member's group coordinator disconnected for
    # good: its partitions were revoked and never assigned again (a CI run). The member then
    # replaces its client mid-run; the stall is declared here, the replacement is real.
    messages = night(tables=3, hours=2, seed=10).messages
    publish_raw(kafka_bootstrap, topic_name, messages)
    lake = tmp_path / "shared"
    stall = threading.Event()
    real_stalled_for = GroupWatch.stalled_for

    def stalled_for(watch: GroupWatch, *, quiet_for: float) -> float:
        if stall.is_set():
            stall.clear()
            return math.inf
        return real_stalled_for(watch, quiet_for=quiet_for)

    monkeypatch.setattr(GroupWatch, "stalled_for", stalled_for)
    source, pipeline, sink, reading = source_in_thread(
        kafka_bootstrap, topic_name, lake, {"batch_size": 500, "stop_when_idle_s": 6.0}
    )
    first_client = source.consumer
    caplog.set_level("INFO", logger="croupier.consumer")
    reading.start()
    deadline = time.monotonic() + 120
    while lake_progress(lake, topic_name) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    stall.set()
    reading.join(600)
    pipeline.close()
    sink.close()
    said = [
        r.getMessage() for r in caplog.records
        if r.getMessage() in ("assigned", "revoked", STALLED)
    ]  # fmt: skip
    # The first client's partitions, forgotten without a revoke; the new client's, revoked at
    # the stop.
    assert said == ["assigned", STALLED, "assigned", "revoked"], said
    assert source.consumer is not first_client
    assert_read_once(lake, topic_name, messages, tmp_path / "single")


READER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from infra import lake as lakes
    end = time.monotonic() + float(sys.argv[2])
    n = 0
    while time.monotonic() < end or n < 2:
        con = lakes.connect(lakes.Lake(root=Path(sys.argv[1])), read_only=True)
        con.execute("SELECT game, count(*), sum(house_result_cents) FROM settlements GROUP BY 1")
        con.execute("SELECT count(*) FROM events").fetchone()
        con.close()
        n += 1
    print(n)
    """
)

CTAS = textwrap.dedent(
    """
    import sys, time, duckdb
    from pathlib import Path
    from infra import lake as lakes
    lake = lakes.Lake(root=Path(sys.argv[1]))
    end = time.monotonic() + float(sys.argv[2])
    n = 0
    while time.monotonic() < end or n < 2:
        con = duckdb.connect(sys.argv[3])
        con.execute("SET enable_progress_bar = false; LOAD ducklake; LOAD sqlite_scanner")
        con.execute(lake.attach_sql(read_only=True))
        con.execute(
            "CREATE OR REPLACE TABLE daily AS SELECT game, date_trunc('day', settled_at) AS day, "
            "sum(wager_cents) AS handle_cents FROM lake.settlements GROUP BY ALL"
        )
        con.close()
        n += 1
    print(n)
    """
)


def test_readers_and_a_ctas_job_run_while_the_consumer_writes(
    kafka_bootstrap: str, topic_name: str, small_night: list[Message], tmp_path: Path
) -> None:
    publish_raw(kafka_bootstrap, topic_name, small_night * 1)
    lake = tmp_path / "lake"
    lakes.connect(lakes.Lake(root=lake), create=True).close()
    writer = subprocess.Popen(
        consumer_command(lake, topic_name, f"g-{uuid.uuid4().hex[:8]}", "--batch-size", "500",
                         "--stop-when-idle", "4"),
        env=consumer_env(kafka_bootstrap), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    while lake_progress(lake, topic_name) == 0 and writer.poll() is None:
        time.sleep(0.1)
    seconds = "8"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(lake), seconds],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    ctas = subprocess.Popen(
        [sys.executable, "-c", CTAS, str(lake), seconds, str(tmp_path / "marts.duckdb")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    r_out, r_err = reader.communicate(timeout=120)
    c_out, c_err = ctas.communicate(timeout=120)
    _, w_err = writer.communicate(timeout=600)
    assert writer.returncode == 0, w_err[-2000:]
    assert reader.returncode == 0, r_err[-2000:]
    assert ctas.returncode == 0, c_err[-2000:]
    assert int(r_out) >= 2 and int(c_out) >= 2
