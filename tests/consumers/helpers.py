"""Shared by the consumer tests: a simulated night with its truth log, and the lake's findings."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import duckdb

from events import occurred_at_ms
from infra import lake as lakes
from producers.simulator import Check, FaultRecord, Message, parse_faults, simulate


@dataclass(frozen=True)
class Night:
    messages: list[Message]
    truth: list[FaultRecord]


def night(*, tables: int, hours: float, seed: int, faults: str = "default") -> Night:
    truth: list[FaultRecord] = []
    messages = list(
        simulate(
            tables=tables,
            hours=hours,
            seed=seed,
            faults=parse_faults(faults),
            on_fault=truth.append,
        )
    )
    return Night(messages=messages, truth=truth)


def expected_violations(truth: list[FaultRecord]) -> Counter[tuple[str, str, str | None]]:
    """(rule_id, table_id, round_id) of every fault that must show as a violation row."""
    return Counter(
        (f.rule_id, f.table_id, f.round_id)
        for f in truth
        if f.check in (Check.PROCEDURE, Check.STREAM)
    )


def found_violations(con: duckdb.DuckDBPyConnection) -> Counter[tuple[str, str, str | None]]:
    rows = con.execute("SELECT rule_id, table_id, round_id FROM violations").fetchall()
    return Counter((r, t, rd) for r, t, rd in rows)


def open_lake(root: Path, catalog: str | None = None) -> duckdb.DuckDBPyConnection:
    """The lake at `root` (its catalog on PostgreSQL at `catalog`, if given), read-only."""
    return lakes.connect(lakes.Lake(root=root, catalog_url=catalog), read_only=True)


def lake_hashes(lake: lakes.Lake) -> dict[str, str]:
    """Every table's content hash (`consumers.sink.content_hashes`), read-only."""
    from consumers.sink import content_hashes

    con = lakes.connect(lake, read_only=True)
    try:
        return content_hashes(con)
    finally:
        con.close()


def evidence(con: duckdb.DuckDBPyConnection, rule_id: str) -> list[dict[str, object]]:
    rows = con.execute("SELECT evidence FROM violations WHERE rule_id = ?", [rule_id]).fetchall()
    return [json.loads(e) for (e,) in rows]


def publish_raw(
    bootstrap: str, topic: str, messages: list[Message], partitions: int = 6, *, create: bool = True
) -> None:
    """Publish the simulator's messages as a device would (malformed ones too), keyed by table,
    to a new topic (`create`) or an existing one."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    if create:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[
            topic
        ].result(timeout=30)
    producer = Producer(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20}
    )
    for msg in messages:
        while True:
            try:
                # Stamped with the event's own time, as our publishers do (see ProducerClient).
                producer.produce(
                    topic,
                    key=msg.key.encode(),
                    value=msg.value,
                    timestamp=occurred_at_ms(msg.value) or 0,
                )
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    if producer.flush(60) != 0:
        raise RuntimeError("messages left unflushed")


def consumer_command(lake: Path, topic: str, group: str, *extra: str) -> list[str]:
    import sys

    return [
        sys.executable, "-m", "croupier", "consume", "--lake", str(lake), "--topic", topic,
        "--group", group, *extra,
    ]  # fmt: skip


def consumer_env(bootstrap: str, dead_letter_topic: str | None = None) -> dict[str, str]:
    import os

    env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": bootstrap}
    env["CROUPIER_KAFKA_DEAD_LETTER_TOPIC"] = dead_letter_topic or "dead-letters-unused"
    return env


def derived_hashes(
    root: Path, catalog: str | None = None, *, positions: bool = False
) -> dict[str, str]:
    """Content hashes of the derived tables, by default ignoring where the events were read
    from."""
    from consumers.sink import content_hashes

    con = open_lake(root, catalog)
    try:
        return content_hashes(con, positions=positions)
    finally:
        con.close()


def lake_progress(lake: Path, topic: str, catalog: str | None = None) -> int:
    """Messages of `topic` the lake has committed (sum of next offsets)."""
    if catalog is None and not (lake / "catalog.sqlite").exists():
        return 0
    try:
        con = open_lake(lake, catalog)
    except Exception:
        return 0
    try:
        (total,) = con.execute(
            "SELECT coalesce(sum(o), 0) FROM (SELECT max(next_offset) o FROM consumer_offsets "
            "WHERE source_topic = ? GROUP BY source_partition)",
            [topic],
        ).fetchone()
    except Exception:
        return 0
    finally:
        con.close()
    return int(total)


def wait_for_progress(lake: Path, topic: str, at_least: int, timeout_s: float = 300.0) -> int:
    """Waits (up to `timeout_s`) until the lake has committed `at_least` messages of `topic`;
    returns its progress then (the caller asserts on it where it matters)."""
    deadline = time.monotonic() + timeout_s
    while (progress := lake_progress(lake, topic)) < at_least and time.monotonic() < deadline:
        time.sleep(0.2)
    return progress


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    """(status, body) of a GET; (0, "") while nothing listens there yet."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except urllib.error.URLError:
        return 0, ""


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie waiting for whoever adopted it counts)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in state
