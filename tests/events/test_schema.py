"""The committed JSON Schema is the models' schema, and it accepts and refuses what they do."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from events import EVENT_MODELS
from events.schema import SCHEMA_PATH, build_schema, render_schema
from tests.events.test_docs import doc_examples


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_committed_schema_equals_the_models() -> None:
    # On failure: regenerate with `uv run python -m events.schema` and commit the file.
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema()


def test_schema_is_a_tagged_union_of_every_event_type() -> None:
    schema = build_schema()
    assert schema["discriminator"]["propertyName"] == "event_type"
    assert set(schema["discriminator"]["mapping"]) == set(EVENT_MODELS)


def test_every_documented_example_validates_against_the_committed_schema(
    validator: jsonschema.Draft202012Validator,
) -> None:
    for example in doc_examples().values():
        validator.validate(json.loads(example))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("cards", 1), "1x"),  # a bad card
        (("amount_cents",), "100"),  # a wrong type
        (("event_type",), "table_exploded"),
        (("face_up",), None),
    ],
)
def test_the_schema_refuses_what_the_models_refuse(
    validator: jsonschema.Draft202012Validator, path: tuple[Any, ...], value: Any
) -> None:
    examples = doc_examples()
    event = json.loads(examples["cards_dealt" if path[0] != "amount_cents" else "bet_placed"])
    target = event
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert not validator.is_valid(event)
