"""Hand-made events for the tests of checks and settlement: a valid event of any type with its
envelope filled in (a fresh id, the next seq, one instant), the fields as given."""

from __future__ import annotations

import uuid
from itertools import count
from typing import Any

from events import Event, validate_event

_seq = count(1)


def hand_made(
    event_type: str,
    *,
    game: str,
    table_id: str,
    round_id: str | None,
    schema_version: int = 1,
    **fields: Any,
) -> Event:
    return validate_event(
        {
            "event_id": str(uuid.uuid4()),
            "event_type": event_type,
            "schema_version": schema_version,
            "casino_id": "c",
            "table_id": table_id,
            "game": game,
            "round_id": round_id,
            "seq": next(_seq),
            "occurred_at": "2025-01-10T23:00:00Z",
            "source_device": f"{table_id}/console",
            **fields,
        }
    )
