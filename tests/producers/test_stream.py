"""The stream writer stamps each event with its own UTC time, a batch that runs past midnight
included, and numbers events by seq and event id one after the other."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from events import Game, parse_event
from games.simulation.stream import Pending, TableStream

MIDNIGHT_MS = int(datetime(2025, 1, 11, tzinfo=UTC).timestamp() * 1000)


def test_a_batch_past_midnight_gets_each_events_own_day_and_time() -> None:
    stream = TableStream(
        casino_id="casino-lima-01",
        table_id="TP-01",
        game=Game.TRIPOKER,
        rng=random.Random(5),
        rates={},
        on_fault=None,
    )
    batch = [Pending("bets_closed", "TP-01/console", {}) for _ in range(5)]
    start, step = MIDNIGHT_MS - 2_500, 1_001  # two events before midnight, three after
    messages = stream.emit(batch, round_id="TP-01-R00001", start_ms=start, step_ms=step)
    events = [parse_event(message.value) for message in messages]
    expected = [datetime.fromtimestamp((start + k * step) / 1000, UTC) for k in range(5)]
    assert [event.occurred_at for event in events] == expected
    assert [event.seq for event in events] == [1, 2, 3, 4, 5]
    assert len({event.event_id for event in events}) == 5
