"""The table-event contract: pydantic models, upcasters, JSON Schema, one parser and one serialiser.

Producers and the consumer both import from here; `docs/events.md` is its user documentation.
"""

from events.codec import (
    CURRENT_VERSIONS,
    EVENT_MODELS,
    MAX_EVENT_BYTES,
    InvalidEvent,
    dump_event,
    occurred_at_ms,
    parse_event,
    validate_event,
)
from events.models import CARD_PATTERN, Event, Game, Recipient, Spot

__all__ = [
    "CARD_PATTERN",
    "CURRENT_VERSIONS",
    "EVENT_MODELS",
    "MAX_EVENT_BYTES",
    "Event",
    "Game",
    "InvalidEvent",
    "Recipient",
    "Spot",
    "dump_event",
    "occurred_at_ms",
    "parse_event",
    "validate_event",
]
