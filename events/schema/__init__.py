"""The committed JSON Schema of the event contract, generated from the models.

Regenerate after changing a model: `uv run python -m events.schema` (a test compares the two).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from events.codec import EVENT_ADAPTER

SCHEMA_PATH = Path(__file__).with_name("table-events.schema.json")
SCHEMA_ID = "https://croupier.example/schemas/table-events.schema.json"


def build_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one message on the `table-events` topic."""
    schema = EVENT_ADAPTER.json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Croupier table event",
        "description": (
            "One message on the table-events topic: the envelope plus the payload of its "
            "event_type. Generated from events/models.py; see docs/events.md."
        ),
        **schema,
    }


def render_schema() -> str:
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    path.write_text(render_schema(), encoding="utf-8")
    return path
