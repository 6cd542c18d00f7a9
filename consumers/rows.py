"""The processor's output: rows for each derived table, handed to the sink."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RowBatch:
    """Rows for each derived table, in the order the processor produced them."""

    rows: dict[str, list[Any]] = field(default_factory=dict)
    violation_ids: set[str] = field(default_factory=set)  # of the violations added

    def add(self, table: str, row: Any) -> None:
        self.rows.setdefault(table, []).append(row)
