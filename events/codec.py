"""Bytes to events and back: the one parser and the one serialiser of the contract.

Parsing upcasts old versions first; every refusal is an `InvalidEvent` naming the fields at fault.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from events.models import Event
from events.upcasters import UPCASTERS, upcast

# Larger messages are refused before decoding (a whole round's events are a few kilobytes).
MAX_EVENT_BYTES = 64 * 1024

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
# The adapter's validator called directly: `TypeAdapter.validate_json` wraps it in Python-level
# argument handling that the consumer paid on every message.
_VALIDATE_JSON = EVENT_ADAPTER.validator.validate_json

EVENT_MODELS: dict[str, type[BaseModel]] = {
    get_args(model.model_fields["event_type"].annotation)[0]: model
    for model in get_args(get_args(Event)[0])
}
"""event_type -> model class."""

CURRENT_VERSIONS: dict[str, int] = {
    name: get_args(model.model_fields["schema_version"].annotation)[0]
    for name, model in EVENT_MODELS.items()
}
"""event_type -> the schema_version producers send today."""


class InvalidEvent(ValueError):
    """A message refused by the contract; `fields` are the dotted paths of the fields at fault."""

    def __init__(self, message: str, fields: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.fields = fields

    @classmethod
    def from_validation(cls, error: ValidationError) -> InvalidEvent:
        fields: list[str] = []
        parts: list[str] = []
        for detail in error.errors(include_url=False):
            loc = ".".join(str(p) for p in detail["loc"])
            if detail["type"] == "json_invalid":
                parts.append(f"invalid JSON: {detail['msg']}")
                continue
            if not loc:
                # The tagged union reports a missing or unknown tag at the top level.
                loc = "event_type" if detail["type"].startswith("union_tag") else "event"
            fields.append(loc)
            parts.append(f"{loc}: {detail['msg']}")
        return cls("invalid event: " + "; ".join(parts), tuple(fields))


def parse_event(raw: bytes | str) -> Event:
    """Decode and validate one message (JSON), upcasting an old schema_version first.

    Raises `InvalidEvent` whose message names each field at fault.
    """
    if len(raw) > MAX_EVENT_BYTES:
        raise InvalidEvent(f"message too large: {len(raw)} bytes > {MAX_EVENT_BYTES}", ("event",))
    try:
        return _VALIDATE_JSON(raw)  # type: ignore[no-any-return]
    except ValidationError as error:
        first = error
    # Only a message that an upcaster reads gets the slower dict path; the rest fail as they are.
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        data = None
    if isinstance(data, dict):
        key = (data.get("event_type"), data.get("schema_version"))
        # Only a str/int pair can name an upcaster (a list here is garbage, and unhashable).
        if isinstance(key[0], str) and type(key[1]) is int and key in UPCASTERS:
            return validate_event(data)
    raise InvalidEvent.from_validation(first) from None


def validate_event(data: Mapping[str, Any]) -> Event:
    """Validate an event given as a mapping (JSON-like values or Python ones: datetimes, UUIDs,
    enums), upcasting first. It goes through JSON, so it judges exactly as `parse_event`."""
    try:
        raw = to_json(upcast(dict(data)))
    except PydanticSerializationError as error:
        raise InvalidEvent(f"invalid event: not JSON-serialisable: {error}", ("event",)) from None
    try:
        return EVENT_ADAPTER.validate_json(raw)
    except ValidationError as error:
        raise InvalidEvent.from_validation(error) from None


def dump_event(event: Event) -> bytes:
    """Compact JSON, fields in model order, timestamps in UTC with a `Z`: the same event always
    gives the same bytes."""
    return EVENT_ADAPTER.dump_json(event)


_OCCURRED_AT = re.compile(rb'"occurred_at"\s*:\s*"([0-9][^"]{9,39})"')


def occurred_at_ms(raw: bytes) -> int | None:
    """The `occurred_at` of a message as epoch milliseconds, read without validating it (for a
    Kafka timestamp when replaying a recording); None if it has none, or none after 1970."""
    found = _OCCURRED_AT.search(raw)
    if found is None:
        return None
    try:
        at = datetime.fromisoformat(found.group(1).decode("ascii").upper())
        ms = int(at.timestamp() * 1000) if at.tzinfo is not None else -1
    except (ValueError, OverflowError, UnicodeDecodeError):
        return None
    return ms if ms >= 0 else None
