"""Pure upcasters: old versions of an event, as plain dicts, rewritten into the current version.

They run on the decoded JSON before validation, so stored history never needs rewriting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

JsonObject = dict[str, Any]
Upcaster = Callable[[JsonObject], JsonObject]


def _deck_counted_v1(data: JsonObject) -> JsonObject:
    # v1 called the number of cards `cards`; v2 says `count`, as the catalogue does.
    out = {key: value for key, value in data.items() if key != "cards"}
    out["schema_version"] = 2
    if "cards" in data:
        out["count"] = data["cards"]
    return out


# (event_type, the version it reads) -> a function returning the next version.
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("deck_counted", 1): _deck_counted_v1,
}


def upcast(data: JsonObject) -> JsonObject:
    """Apply upcasters until the event is at a version no upcaster reads (the current one).

    >>> upcast({"event_type": "deck_counted", "schema_version": 1, "cards": 53})
    {'event_type': 'deck_counted', 'schema_version': 2, 'count': 53}
    """
    while True:
        event_type, version = data.get("event_type"), data.get("schema_version")
        if not isinstance(event_type, str) or type(version) is not int:
            return data
        step = UPCASTERS.get((event_type, version))
        if step is None:
            return data
        data = step(data)
