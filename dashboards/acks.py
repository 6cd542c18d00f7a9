"""The dashboards' own audit trail: acknowledgements of alerts (who, when, note), refused
sign-ins (when, which account, from where, why) and ended sign-in sessions (whose cookies are
refused from then on, dashboards/sessions.py), kept in a small SQLite file: append-only
(triggers refuse updates and deletes), so the log is the audit trail.

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

from dashboards.auth import Failure

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
CREATE TABLE IF NOT EXISTS sign_in_failures (
    entry_no INTEGER PRIMARY KEY AUTOINCREMENT,
    attempted_at TEXT NOT NULL,
    account TEXT,  -- NULL: a name that is no account's (not kept: it may be a password)
    client TEXT NOT NULL,
    reason TEXT NOT NULL,
    wait_s REAL NOT NULL
);
CREATE TRIGGER IF NOT EXISTS sign_in_failures_no_update BEFORE UPDATE ON sign_in_failures
BEGIN SELECT RAISE(ABORT, 'sign_in_failures is append-only'); END;
CREATE TRIGGER IF NOT EXISTS sign_in_failures_no_delete BEFORE DELETE ON sign_in_failures
BEGIN SELECT RAISE(ABORT, 'sign_in_failures is append-only'); END;
CREATE TABLE IF NOT EXISTS sessions_ended (
    sid TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    ended_at TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS sessions_ended_no_update BEFORE UPDATE ON sessions_ended
BEGIN SELECT RAISE(ABORT, 'sessions_ended is append-only'); END;
CREATE TRIGGER IF NOT EXISTS sessions_ended_no_delete BEFORE DELETE ON sessions_ended
BEGIN SELECT RAISE(ABORT, 'sessions_ended is append-only'); END;
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
    from infra.config import get_settings

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


def record_sign_in_failure(path: Path, failure: Failure) -> None:
    at = datetime.now(UTC).isoformat(timespec="seconds")
    with _connect(path) as con, con:
        con.execute(
            "INSERT INTO sign_in_failures (attempted_at, account, client, reason, wait_s) "
            "VALUES (?, ?, ?, ?, ?)",
            [at, failure.name, failure.client, failure.reason, round(failure.wait_s, 1)],
        )


def sign_in_failures(path: Path, *, limit: int = 500) -> pd.DataFrame:
    """The latest refused sign-ins, newest first."""
    columns = ["entry_no", "attempted_at", "account", "client", "reason", "wait_s"]
    if not path.is_file():
        return pd.DataFrame(columns=columns)
    with _connect(path) as con:
        rows = con.execute(
            f"SELECT {', '.join(columns)} FROM sign_in_failures ORDER BY entry_no DESC LIMIT ?",
            [limit],
        ).fetchall()
    return pd.DataFrame(rows, columns=columns)


def end_session(path: Path, *, sid: str, name: str) -> None:
    """End sign-in session `sid` for good: its cookie is refused from now on, by every server
    process, across restarts. Ending it twice is ending it once."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    with _connect(path) as con, con:
        con.execute("INSERT OR IGNORE INTO sessions_ended VALUES (?, ?, ?)", [sid, name, at])


def session_ended(path: Path, sid: str) -> bool:
    if not path.is_file():
        return False
    with _connect(path) as con:
        row = con.execute("SELECT 1 FROM sessions_ended WHERE sid = ?", [sid]).fetchone()
    return row is not None
