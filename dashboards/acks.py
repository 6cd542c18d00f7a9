"""Acknowledgements of alerts (who, when, note), kept in a small SQLite file of the dashboards'
own: append-only (triggers refuse updates and deletes), so the log is the audit trail.

The file is `<data_dir>/dashboards/acks.sqlite`, never the lake, which only the consumer writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

import pandas as pd

MAX_NOTE = 1000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS ack_log (
    entry_no INTEGER PRIMARY KEY AUTOINCREMENT,
    alert_kind TEXT NOT NULL CHECK (alert_kind IN ('violation', 'statistical')),
    alert_id TEXT NOT NULL,
    acknowledged_by TEXT NOT NULL,
    role TEXT NOT NULL,
    note TEXT NOT NULL,
    acknowledged_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ack_log_alert ON ack_log (alert_kind, alert_id);
CREATE TRIGGER IF NOT EXISTS ack_log_no_update BEFORE UPDATE ON ack_log
BEGIN SELECT RAISE(ABORT, 'ack_log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS ack_log_no_delete BEFORE DELETE ON ack_log
BEGIN SELECT RAISE(ABORT, 'ack_log is append-only'); END;
"""


class AlertKind(StrEnum):
    VIOLATION = "violation"  # fct_violations.violation_id
    STATISTICAL = "statistical"  # fct_statistical_alerts.alert_id


class AckError(ValueError):
    """The acknowledgement was refused (no note, note too long, nothing selected)."""


@dataclass(frozen=True, kw_only=True)
class AlertKey:
    kind: AlertKind
    alert_id: str


def default_path() -> Path:
    from croupier.config import get_settings

    return get_settings().data_dir / "dashboards" / "acks.sqlite"


@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=10)
    try:
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = FULL")  # an acknowledgement survives a power cut
        con.executescript(_SCHEMA)
        yield con
    finally:
        con.close()


def acknowledge(path: Path, keys: list[AlertKey], *, user: str, role: str, note: str) -> int:
    """Record that `user` acknowledged these alerts, with a note; returns rows written."""
    note = note.strip()
    if not keys:
        raise AckError("Select at least one alert to acknowledge.")
    if not note:
        raise AckError("Write a note: what was checked and what was decided.")
    if len(note) > MAX_NOTE:
        raise AckError(f"The note is too long ({len(note)} characters, at most {MAX_NOTE}).")
    at = datetime.now(UTC).isoformat(timespec="seconds")
    with _connect(path) as con, con:
        con.executemany(
            "INSERT INTO ack_log (alert_kind, alert_id, acknowledged_by, role, note, "
            "acknowledged_at) VALUES (?, ?, ?, ?, ?, ?)",
            [(k.kind.value, k.alert_id, user, role, note, at) for k in keys],
        )
    return len(keys)


def acknowledged(path: Path, kind: AlertKind) -> frozenset[str]:
    """Ids of the alerts of this kind that someone acknowledged."""
    if not path.is_file():
        return frozenset()
    with _connect(path) as con:
        rows = con.execute(
            "SELECT DISTINCT alert_id FROM ack_log WHERE alert_kind = ?", [kind.value]
        ).fetchall()
    return frozenset(row[0] for row in rows)


def audit_trail(path: Path, *, limit: int = 500) -> pd.DataFrame:
    """The latest acknowledgements, newest first."""
    columns = ["entry_no", "acknowledged_at", "acknowledged_by", "role", "alert_kind",
               "alert_id", "note"]  # fmt: skip
    if not path.is_file():
        return pd.DataFrame(columns=columns)
    with _connect(path) as con:
        rows = con.execute(
            f"SELECT {', '.join(columns)} FROM ack_log ORDER BY entry_no DESC LIMIT ?", [limit]
        ).fetchall()
    return pd.DataFrame(rows, columns=columns)
