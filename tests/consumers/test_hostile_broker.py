"""Issue 13's findings end to end: one hostile night on a real broker, `croupier consume`, then
`croupier build`. Before, the first message of these stopped every table for good and a late
duplicate broke every later dbt build; now the consumer exits 0, every round no message touched
settles as in the clean night, each fault is reported, and the marts build."""

from __future__ import annotations

import subprocess
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from events import occurred_at_ms
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import build_marts
from producers.simulator import Message
from tests.consumers.helpers import consumer_command, consumer_env, open_lake
from tests.consumers.test_hostile_input import (
    CLEAN,
    assert_untouched_equal,
    by_round,
    clean,  # noqa: F401  (the fixture)
    decode,
    encode,
    find,
    violations,
)

pytestmark = pytest.mark.kafka


Stamped = list[tuple[Message, int | None]]


def hostile_night() -> tuple[Stamped, Stamped, set[str], str]:
    """The clean night with one of each finding's messages, each with the Kafka timestamp a
    device would stamp (its true time); duplicates to send after it (once the originals are
    stored: a copy on another table's partition could otherwise be read first); the rounds
    they touch; the dealer's bad round."""
    events = decode(CLEAN.messages)
    touched: set[str] = set()
    # 1. a dealer's setting with a repeated card
    dealer = find(events, lambda e: e["event_type"] == "hand_set" and e["seat"] == 0, 5)
    events[dealer]["high"][1] = events[dealer]["high"][0]
    touched.add(events[dealer]["round_id"])
    bad_setting = events[dealer]["round_id"]
    # 2. a seq that jumps by 1000 a quarter into a table's night
    tp = [i for i, e in enumerate(events) if e["table_id"] == "TP-01" and e["round_id"]]
    events[tp[len(tp) // 4]]["seq"] += 1000
    touched.add(events[tp[len(tp) // 4]]["round_id"])
    # 5. an implausible time (the message keeps its true timestamp)
    late = find(events, lambda e: e["event_type"] == "bet_placed", 60)
    events[late]["occurred_at"] = "2099-01-01T00:00:00Z"
    touched.add(events[late]["round_id"])
    stamps = [occurred_at_ms(m.value) for m in CLEAN.messages]
    messages = list(zip(encode(events), stamps, strict=True))
    # 3. duplicates: an old event replayed, an id reused with another amount, an id on another
    # table; 4. a repeated JSON key; 5. a table claiming another game, another casino's event.
    bet = find(events, lambda e: e["event_type"] == "bet_placed", 3)
    moved = find(events, lambda e: e["table_id"] == "TH-01" and e["event_type"] == "cards_dealt")
    pg = find(events, lambda e: e["event_type"] == "table_opened" and e["table_id"] == "PG-01")
    twice = CLEAN.messages[bet + 1].value.replace(b'"seq":', b'"seq":1,"seq":', 1)
    extra = [
        *encode(
            [
                {**events[pg], "event_id": str(uuid.uuid4()), "game": "holdem"},
                {**events[pg], "event_id": str(uuid.uuid4()), "casino_id": "casino-cusco-02"},
            ]
        ),
        Message(events[bet + 1]["table_id"], twice),
    ]
    half = len(messages) // 2
    messages[half:half] = [(m, stamps[half]) for m in extra]
    later = [
        CLEAN.messages[2],
        *encode(
            [
                {**events[bet], "amount_cents": events[bet]["amount_cents"] + 100},
                {**events[moved], "table_id": "TP-01", "game": "tripoker"},
            ]
        ),
    ]
    return messages, [(m, stamps[-1]) for m in later], touched, bad_setting


def test_a_hostile_night_through_the_broker_settles_and_builds(
    kafka_bootstrap: str,
    topic_name: str,
    tmp_path: Path,
    clean: dict[str, tuple[Any, ...]],  # noqa: F811
    dbt: DbtWorker,
) -> None:
    messages, later, touched, bad_setting = hostile_night()
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic_name, num_partitions=3, replication_factor=1)])[
        topic_name
    ].result(timeout=30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "enable.idempotence": True})
    lake = tmp_path / "lake"
    group = f"g-{uuid.uuid4().hex[:8]}"
    for batch in (messages, later):  # the second run: another consumer process, later
        for msg, stamp in batch:
            producer.produce(
                topic_name, key=msg.key.encode(), value=msg.value, timestamp=stamp or 0
            )
            producer.poll(0)
        if batch is later:  # a message without a key, as a device bypassing the client
            producer.produce(topic_name, value=CLEAN.messages[7].value, partition=0)
        assert producer.flush(60) == 0
        done = subprocess.run(
            consumer_command(lake, topic_name, group, "--stop-when-idle", "4"),
            env=consumer_env(kafka_bootstrap),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]

    con = open_lake(lake)
    (stored, distinct) = con.execute(
        "SELECT count(*), count(DISTINCT event_id) FROM events"
    ).fetchone()
    assert stored == distinct
    reasons = Counter(r for (r,) in con.execute("SELECT reason FROM dead_letters").fetchall())
    assert reasons == Counter(
        {
            "conflicting_duplicate": 2,
            "duplicate_key": 1,
            "game_mismatch": 1,
            "foreign_casino": 1,
            "key_mismatch": 1,
        }
    )
    found = violations(con)
    assert found["EVT-ENGINE/unprocessable"] == 0
    assert found["EVT-SEQ/seq_jump"] == 1
    assert found["EVT-DUP/duplicate_event"] == 1
    assert found["EVT-DUP/conflicting_duplicate"] == 2
    assert found["EVT-TIME/implausible_time"] == 1
    wrong_group = con.execute(
        "SELECT DISTINCT round_id FROM violations WHERE rule_id = 'PGP-A12a'"
    ).fetchall()
    assert wrong_group == [(bad_setting,)]
    assert_untouched_equal(clean, by_round(con), touched)
    con.close()

    # dbt's uniqueness tests (events, rounds, violations, ...) hold: the build passes, twice.
    marts = tmp_path / "marts"
    build_marts(lakes.Lake(root=lake), marts, quiet=True, dbt=dbt)
