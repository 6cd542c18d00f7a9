"""docs/events.md documents every event type and field, and its examples are canonical events."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from events import CURRENT_VERSIONS, EVENT_MODELS, dump_event, parse_event

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"
ENVELOPE = {
    "event_id",
    "event_type",
    "schema_version",
    "casino_id",
    "table_id",
    "game",
    "round_id",
    "seq",
    "occurred_at",
    "source_device",
}


@cache
def doc_sections() -> dict[str, str]:
    """event_type -> the text of its `### `event_type`` section."""
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^### `(\w+)` \(v\d+\)\n", text, flags=re.M)
    return {parts[i]: parts[i + 1].split("\n## ")[0] for i in range(1, len(parts), 2)}


@cache
def doc_examples() -> dict[str, str]:
    """event_type -> the JSON example in its section."""
    examples = {}
    for name, section in doc_sections().items():
        match = re.search(r"```json\n(.+?)\n```", section, flags=re.S)
        assert match, f"{name}: no example"
        examples[name] = match.group(1)
    return examples


def test_every_event_type_has_a_section_with_its_current_version() -> None:
    assert set(doc_sections()) == set(EVENT_MODELS)
    text = DOC.read_text(encoding="utf-8")
    for name, version in CURRENT_VERSIONS.items():
        assert f"### `{name}` (v{version})" in text


def test_every_payload_field_is_documented_in_its_section() -> None:
    for name, model in EVENT_MODELS.items():
        for field in set(model.model_fields) - ENVELOPE:
            assert f"| `{field}` |" in doc_sections()[name], f"{name}.{field} undocumented"


def test_every_example_is_a_valid_event_of_its_type_in_canonical_form() -> None:
    for name, example in doc_examples().items():
        event = parse_event(example.encode())
        assert event.event_type == name
        assert dump_event(event).decode() == example
