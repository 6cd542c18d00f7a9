"""Rounds rebuilt from the events the lake stored: for the what-if re-settlement and the hold
test's expectations (consumers/evidence.py). Read-only: the caller's session decides where the
lake is and how it is attached."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import duckdb

from events import parse_event
from events.models import Event

_BATCH = 5_000


def stored_rounds(
    con: Any, picked: str, params: Sequence[Any] = (), *, lake: str = ""
) -> Iterator[tuple[dict[str, Any], list[Event]]]:
    """Each round `picked` selects (a SELECT of lake `rounds` rows), per table in time order:
    what the lake recorded (game, handle, house result, the seats whose every line was
    returned, profile, the meter before it) and its events in the order the lake received
    them, those the consumer applied to it: not those it skipped (lake.skipped_events: a
    replayed round's, one outside its round, one after its round closed). A round with a
    stored event that does not parse has `unreadable` (why) in what it gives, and the other
    events. `lake` prefixes the lake's table names (`lake.main.` where the session's default
    catalog is another)."""
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE stored_picked AS
        SELECT p.round_id, p.table_id, p.game, p.profile, p.profile_version, p.started_at,
               p.ended_at
        FROM ({picked}) p
        """,
        list(params),
    )
    (count,) = con.execute("SELECT count(*) FROM stored_picked").fetchone()
    if not count:  # nothing to read: spare the scans of the whole lake below
        return
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE picked_rounds AS
        WITH seats AS (
            SELECT s.round_id, s.seat, sum(s.wager_cents) AS wager_cents,
                   sum(s.house_result_cents) AS house_result_cents,
                   bool_and(s.outcome = 'returned' AND s.bettor = 'player') AS returned
            FROM {lake}settlements s JOIN stored_picked USING (round_id)
            GROUP BY s.round_id, s.seat
        ),
        lines AS (
            SELECT round_id, sum(wager_cents)::BIGINT AS handle_cents,
                   sum(house_result_cents)::BIGINT AS house_result_cents,
                   list(seat ORDER BY seat) FILTER (WHERE returned) AS returned_seats
            FROM seats GROUP BY round_id
        ),
        ledger AS (
            SELECT j.table_id, j.round_id, max(j.occurred_at) AS occurred_at,
                   arg_min(j.meter_before_cents, j.entry_no) AS meter_before_cents,
                   arg_max(j.meter_after_cents, j.entry_no) AS meter_after_cents
            FROM {lake}jackpot_ledger j GROUP BY j.table_id, j.round_id
        ),
        meters AS (  -- the table's meter as recorded: after each round, and at each reset
            SELECT table_id, occurred_at, meter_after_cents AS meter_cents FROM ledger
            UNION ALL
            SELECT table_id, occurred_at, (payload::JSON->>'meter_cents')::BIGINT
            FROM {lake}events WHERE event_type = 'progressive_meter_reset'
        )
        SELECT p.*, (p.started_at AT TIME ZONE 'UTC')::DATE AS day,
               coalesce(l.handle_cents, 0) AS handle_cents,
               coalesce(l.house_result_cents, 0) AS house_result_cents,
               coalesce(l.returned_seats, []) AS returned_seats,
               coalesce(own.meter_before_cents, last.meter_cents) AS meter_cents
        FROM stored_picked p
        LEFT JOIN lines l USING (round_id)
        LEFT JOIN ledger own ON own.round_id = p.round_id
        ASOF LEFT JOIN meters last
            ON last.table_id = p.table_id AND last.occurred_at <= p.started_at
        """
    )
    # the events the consumer never applied to the round are listed in skipped_events (a lake
    # no consumer has opened since that table came has none: its rounds are read whole)
    applied = f"e.event_id NOT IN (SELECT event_id FROM {lake}skipped_events)"
    try:
        con.execute(f"SELECT 1 FROM {lake}skipped_events LIMIT 0")
    except duckdb.CatalogException:
        applied = "true"
    cursor = con.execute(
        f"""
        SELECT w.round_id, w.table_id, w.game, w.profile, w.profile_version, w.day,
               w.handle_cents, w.house_result_cents, w.returned_seats, w.meter_cents,
               w.started_at, w.ended_at, e.payload
        FROM picked_rounds w
        JOIN {lake}events e ON e.round_id = w.round_id AND e.table_id = w.table_id
        WHERE {applied}
        -- a device that restarts its numbering mid-round sends seq 1 again: seq orders nothing
        ORDER BY w.table_id, w.started_at, w.round_id, e.rowid
        """
    )
    current: dict[str, Any] | None = None
    events: list[Any] = []
    while True:
        batch = cursor.fetchmany(_BATCH)
        if not batch:
            break
        for (
            round_id, table_id, game, prof, version, day, handle, house, returned, meter,
            started, ended, payload,
        ) in batch:  # fmt: skip
            if current is None or current["round_id"] != round_id:
                if current is not None:
                    yield current, events
                current = {
                    "round_id": round_id,
                    "table_id": table_id,
                    "game": game,
                    "profile": prof,
                    "profile_version": version,
                    "day": day,
                    "handle_cents": int(handle),
                    "house_result_cents": int(house),
                    "returned_seats": tuple(returned),
                    "meter_cents": None if meter is None else int(meter),
                    "started_at": started,
                    "ended_at": ended,
                    "unreadable": None,
                }
                events = []
            try:
                events.append(parse_event(payload))
            except Exception as error:
                # Any stored payload the contract refuses (one written under another contract,
                # or altered): this round only is not judged, and says why; the others are.
                current["unreadable"] = current["unreadable"] or f"a stored event: {error}"[:300]
    if current is not None:
        yield current, events
