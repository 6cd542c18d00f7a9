"""Writes tests/data/bad_messages.json: malformed and adversarial messages for the consumer.

Each entry: the raw bytes (base64), the key, and the dead-letter reason the consumer must give.
Run `uv run python tests/data/make_bad_messages.py` to regenerate (deterministic).
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

GOOD = {
    "event_id": "0b7e8d2a-5c1f-4e7a-9d3b-2f6a8c4e1d00",
    "event_type": "bet_placed",
    "schema_version": 1,
    "casino_id": "casino-lima-01",
    "table_id": "BAD-01",
    "game": "pai_gow",
    "round_id": "BAD-01-R00001",
    "seq": 5,
    "occurred_at": "2025-01-10T23:00:00Z",
    "source_device": "BAD-01/console",
    "seat": 1,
    "spot": "main",
    "amount_cents": 5000,
    "player_ref": "P0000000001",
}


def entries() -> list[dict[str, str | None]]:
    rng = random.Random(20251129)
    out: list[dict[str, str | None]] = []

    def add(raw: bytes, expect: str, key: str | None = "BAD-01") -> None:
        out.append({"b64": base64.b64encode(raw).decode(), "key": key, "expect": expect})

    good = json.dumps(GOOD).encode()
    # Truncated JSON at many lengths.
    for cut in range(1, len(good) - 1, 4):
        add(good[:cut], "invalid_json")
    # Not UTF-8 at all.
    for _ in range(30):
        add(bytes(rng.randrange(128, 256) for _ in range(rng.randrange(1, 200))), "undecodable")
    add(b"\xff\xfe" + good, "undecodable")
    # JSON that is not an event object.
    for text in ["[]", "null", "42", '"x"', "[1,2,3]", "true"]:
        add(text.encode(), "schema")
    for text in ["{}", '{"event_type": null}', '{"event_type": ["bet_placed"]}']:
        add(text.encode(), "unknown_event_type")
    add(b"", "invalid_json")
    add(b"   ", "invalid_json")
    # Unknown event types.
    for name in ["bet_taken", "ROUND_STARTED", "", "round_started ", "drop table", "🎲"]:
        add(json.dumps({**GOOD, "event_type": name}).encode(), "unknown_event_type")
    # Missing each field in turn.
    for field in GOOD:
        if field in ("event_type", "player_ref"):  # player_ref is optional
            continue
        add(json.dumps({k: v for k, v in GOOD.items() if k != field}).encode(), "schema")
    # Wrong types for each field.
    wrong = [1.5, "12", None, [], {}, True, -1, "x" * 300]
    for field in GOOD:
        if field == "event_type":
            continue
        for value in rng.sample(wrong, 3):
            if field == "player_ref" and value is None:
                continue  # optional: null is valid
            if isinstance(GOOD[field], str) and value == "12":
                continue  # "12" is a valid id
            add(json.dumps({**GOOD, field: value}).encode(), "schema")
    # Extra fields, bad cards, naive times, adversarial strings.
    add(json.dumps({**GOOD, "extra": 1}).encode(), "schema")
    add(json.dumps({**GOOD, "occurred_at": "2025-01-10T23:00:00"}).encode(), "schema")
    add(json.dumps({**GOOD, "amount_cents": 0}).encode(), "schema")
    add(json.dumps({**GOOD, "amount_cents": -500}).encode(), "schema")
    add(json.dumps({**GOOD, "amount_cents": 10**30}).encode(), "schema")
    add(json.dumps({**GOOD, "seat": 9}).encode(), "schema")
    add(json.dumps({**GOOD, "table_id": "x'); DROP TABLE events; --"}).encode(), "schema")
    add(json.dumps({**GOOD, "player_ref": "' OR 1=1 --"}).encode(), "schema")
    dealt = {
        **{
            k: v for k, v in GOOD.items() if k not in ("seat", "spot", "amount_cents", "player_ref")
        },
        "event_type": "cards_dealt",
        "recipient": "seat",
        "seat": 1,
        "group": None,
        "face_up": False,
    }
    for cards in (["Zz"], ["1s"], ["As", "Ax"], ["10s"], ["as"], ["JK"], ["A♠"], []):
        add(
            json.dumps(
                {**dealt, "cards": cards, "deal_order": list(range(1, len(cards) + 1))}
            ).encode(),
            "schema",
        )
    # Oversized messages.
    for size in (70_000, 130_000):
        add(json.dumps({**GOOD, "player_ref": "P" * size}).encode(), "oversized")
    # Valid events whose key is not their table (a producer bug that would break ordering).
    for key in ("OTHER-01", "", "BAD-01 "):
        add(good, "key_mismatch", key=key)
    # Deeply nested and huge-number JSON.
    add(b"[" * 10_000 + b"]" * 10_000, "invalid_json")
    add(b'{"seq": 1' + b"0" * 5000 + b"}", "invalid_json")
    add(json.dumps({**GOOD, "seq": 2**64}).encode(), "schema")
    return out


if __name__ == "__main__":
    data = entries()
    path = Path(__file__).with_name("bad_messages.json")
    path.write_text(json.dumps(data, indent=0) + "\n")
    print(f"{len(data)} messages -> {path}")
