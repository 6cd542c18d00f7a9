"""Shared by the consumer tests: a simulated night with its truth log, and the lake's findings."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import duckdb

from croupier import lake as lakes
from producers.simulator import Check, FaultRecord, Message, parse_faults, simulate


@dataclass(frozen=True)
class Night:
    messages: list[Message]
    truth: list[FaultRecord]


def night(*, tables: int, hours: float, seed: int, faults: str = "default") -> Night:
    truth: list[FaultRecord] = []
    messages = list(
        simulate(
            tables=tables,
            hours=hours,
            seed=seed,
            faults=parse_faults(faults),
            on_fault=truth.append,
        )
    )
    return Night(messages=messages, truth=truth)


def expected_violations(truth: list[FaultRecord]) -> Counter[tuple[str, str, str | None]]:
    """(rule_id, table_id, round_id) of every fault that must show as a violation row."""
    return Counter(
        (f.rule_id, f.table_id, f.round_id)
        for f in truth
        if f.check in (Check.PROCEDURE, Check.STREAM)
    )


def found_violations(con: duckdb.DuckDBPyConnection) -> Counter[tuple[str, str, str | None]]:
    rows = con.execute("SELECT rule_id, table_id, round_id FROM violations").fetchall()
    return Counter((r, t, rd) for r, t, rd in rows)


def open_lake(root: Path) -> duckdb.DuckDBPyConnection:
    return lakes.connect(lakes.Lake(root=root), read_only=True)


def evidence(con: duckdb.DuckDBPyConnection, rule_id: str) -> list[dict[str, object]]:
    rows = con.execute("SELECT evidence FROM violations WHERE rule_id = ?", [rule_id]).fetchall()
    return [json.loads(e) for (e,) in rows]
