"""Acknowledgements: who, when and why, kept in an append-only SQLite log of the dashboards'
own that survives restarts and refuses to be edited."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dashboards import acks

V = acks.AlertKind.VIOLATION
S = acks.AlertKind.STATISTICAL


def test_acknowledgement_records_who_when_and_the_note(tmp_path: Path) -> None:
    path = tmp_path / "acks.sqlite"
    before = datetime.now(UTC).replace(microsecond=0)
    written = acks.acknowledge(
        path,
        [acks.AlertKey(kind=V, alert_id="v1"), acks.AlertKey(kind=S, alert_id="s1")],
        user="sam",
        role="surveillance",
        note="Checked the video: chips miscounted, dealer retrained.",
    )
    assert written == 2
    assert acks.acknowledged(path, V) == {"v1"}
    assert acks.acknowledged(path, S) == {"s1"}
    trail = acks.audit_trail(path)
    assert list(trail["alert_id"]) == ["s1", "v1"]  # newest entry first
    assert set(trail["acknowledged_by"]) == {"sam"}
    assert set(trail["role"]) == {"surveillance"}
    assert datetime.fromisoformat(trail.at[0, "acknowledged_at"]) >= before


def test_the_log_is_append_only(tmp_path: Path) -> None:
    path = tmp_path / "acks.sqlite"
    acks.acknowledge(
        path, [acks.AlertKey(kind=V, alert_id="v1")], user="a", role="manager", note="n"
    )
    con = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute("UPDATE ack_log SET note = 'rewritten'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute("DELETE FROM ack_log")
    finally:
        con.close()
    assert list(acks.audit_trail(path)["note"]) == ["n"]


@pytest.mark.parametrize(
    ("keys", "note", "problem"),
    [
        ([], "note", "Select at least one alert"),
        ([acks.AlertKey(kind=V, alert_id="v")], "   ", "Write a note"),
        ([acks.AlertKey(kind=V, alert_id="v")], "x" * (acks.MAX_NOTE + 1), "too long"),
    ],
)
def test_incomplete_acknowledgement_is_refused(
    tmp_path: Path, keys: list[acks.AlertKey], note: str, problem: str
) -> None:
    path = tmp_path / "acks.sqlite"
    with pytest.raises(acks.AckError, match=problem):
        acks.acknowledge(path, keys, user="a", role="manager", note=note)
    assert acks.audit_trail(path).empty


def test_hostile_note_is_kept_verbatim_and_harms_nothing(tmp_path: Path) -> None:
    path = tmp_path / "acks.sqlite"
    note = "'); DROP TABLE ack_log; -- <script>alert(1)</script> \" OR 1=1"
    acks.acknowledge(
        path, [acks.AlertKey(kind=V, alert_id="v'1")], user="a", role="manager", note=note
    )
    acks.acknowledge(
        path, [acks.AlertKey(kind=V, alert_id="v2")], user="b", role="manager", note="ok"
    )
    trail = acks.audit_trail(path)
    assert list(trail["note"]) == ["ok", note]
    assert acks.acknowledged(path, V) == {"v'1", "v2"}


def test_no_log_yet_means_nothing_acknowledged(tmp_path: Path) -> None:
    assert acks.acknowledged(tmp_path / "none.sqlite", V) == frozenset()
    assert acks.audit_trail(tmp_path / "none.sqlite").empty
