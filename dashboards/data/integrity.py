"""Integrity: violations, payout accuracy, house way, statistical alerts and their
acknowledgements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import duckdb
import pandas as pd

from dashboards import acks, auth
from dashboards.data.core import (
    Filters,
    _dealers_in,
    _frame,
    _int,
    _lake_frame,
    _where,
    current_store,
    lake_snapshot,
    viewer,
)
from dashboards.data.prose import explain
from dashboards.rule_texts import text_of
from infra.lake import only_added_rows

ViolationBreakdown = Literal["rule", "severity", "dealer", "table", "day"]
_VIOLATION_KEYS = {
    "rule": "rule_id",
    "severity": "severity",
    "dealer": "dealer_id",
    "table": "table_id",
    "day": "gaming_date",
}


def violations_by(
    f: Filters, by: ViolationBreakdown, severities: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Violations and rounds affected per rule, severity, dealer, table or day (agg_violations);
    by rule, each with its text from the spec."""
    where, params = _where(f)
    if severities:
        where += " AND severity IN (SELECT UNNEST(?))"
        params.append(severities)
    key = _VIOLATION_KEYS[by]
    frame = _frame(
        f"""
        SELECT {key} AS key, sum(violations)::BIGINT AS violations,
               sum(rounds_affected)::BIGINT AS rounds_affected,
               sum(violations) FILTER (WHERE severity = 'critical')::BIGINT AS critical
        FROM agg_violations WHERE {where}
        GROUP BY key ORDER BY violations DESC, key
        """,
        params,
    )
    frame["critical"] = frame["critical"].fillna(0).astype("int64")
    if by == "rule":
        frame["rule_text"] = [text_of(str(k)) for k in frame["key"]]
    return frame


def violations_detail(
    f: Filters, severities: tuple[str, ...] = (), *, limit: int = 500
) -> pd.DataFrame:
    """The latest violations matching `f`, each with its rule text and whether it was
    acknowledged."""
    where, params = _where(f)
    if severities:
        where += " AND severity IN (SELECT UNNEST(?))"
        params.append(severities)
    frame = _frame(
        f"""
        SELECT occurred_at, table_id, dealer_id, rule_id, severity, check_name, round_id,
               evidence, violation_id
        FROM fct_violations WHERE {where}
        ORDER BY occurred_at DESC, violation_id LIMIT ?
        """,
        [*params, limit],
    )
    frame.insert(4, "rule_text", [text_of(str(r)) for r in frame["rule_id"]])
    done = acks.acknowledged(current_store().acks, acks.AlertKind.VIOLATION)
    frame["acknowledged"] = frame["violation_id"].isin(done)
    return frame


LIVE_LIMIT = 200  # rows the live panel lists (newest first); `count` says how many there are
LIVE_COLUMNS = [
    "occurred_at", "table_id", "round_id", "rule_id", "rule_text", "check_name", "dealer_id",
    "evidence", "violation_id",
]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class LiveViolations:
    """Critical violations the lake committed after snapshot `since` (the one the shown build
    was made from), up to snapshot `until` (the lake's latest), newest first."""

    rows: pd.DataFrame  # LIVE_COLUMNS, at most LIVE_LIMIT rows
    count: int  # all of them (matching the filters)
    since: int
    until: int
    expired: bool = False  # the lake no longer keeps snapshot `since` + 1: nothing can be said


def live_critical_violations(f: Filters, since: int, *, limit: int = LIVE_LIMIT) -> LiveViolations:
    """Critical violations committed to the lake after snapshot `since`, read live from the
    lake's change feed (not the marts): `table_insertions` reads only the data files holding rows
    committed between `since` + 1 and the latest snapshot (the catalog says which; a file lake
    maintenance merged records each row's snapshot, and may hold older rows too), never the
    whole table, so it stays cheap however many rows the lake holds. Honours the game, table
    and dealer filters; not the dates or shifts (everything since the build is shown). A viewer
    who may not see the Integrity page gets no row; money in the evidence is taken out as everywhere
    (`redact`). LakeAway when the lake cannot be read."""
    empty = pd.DataFrame(columns=LIVE_COLUMNS)
    until = lake_snapshot()
    if "integrity" not in viewer().pages or until <= since:
        return LiveViolations(rows=empty, count=0, since=since, until=until)
    clauses = ["severity = 'critical'"]
    params: list[object] = [since + 1, until]
    source = "lake.table_insertions('violations', ?, ?)"
    if _lake_frame(  # a delete since the build? (the catalog alone answers)
        "SELECT count(*) AS n FROM lake.snapshots() WHERE snapshot_id BETWEEN ? AND ? "
        f"AND NOT {only_added_rows()}",
        [since + 1, until],
    )["n"].iloc[0]:
        # The change feed still lists a row inserted and then deleted (an operator's repair):
        # the rows added since the build are then read from the table at `until`.
        params = []
        source = (
            f"(SELECT * FROM lake.violations AT (VERSION => {int(until)}) WHERE rowid > "
            f"(SELECT coalesce(max(rowid), -1) FROM lake.violations AT (VERSION => {int(since)})))"
        )
    for column, values in (("game", f.games), ("table_id", f.tables), ("dealer_id", f.dealers)):
        if values:
            clauses.append(f"{column} IN (SELECT UNNEST(?))")
            params.append(tuple(values))
    try:
        frame = _lake_frame(
            f"""
            SELECT occurred_at, table_id, round_id, rule_id, check_name, dealer_id, evidence,
                   violation_id, count(*) OVER () AS matching
            FROM {source}
            WHERE {" AND ".join(clauses)}
            ORDER BY occurred_at DESC, violation_id LIMIT ?
            """,
            [*params, limit],
        )
    except duckdb.InvalidInputException:  # snapshots since the build expired by maintenance
        return LiveViolations(rows=empty, count=0, since=since, until=until, expired=True)
    count = _int(frame["matching"].iloc[0]) if not frame.empty else 0
    frame = frame.drop(columns=["matching"])
    frame.insert(4, "rule_text", [text_of(str(r)) for r in frame["rule_id"]])
    return LiveViolations(
        rows=frame[[c for c in LIVE_COLUMNS if c in frame.columns]],
        count=count,
        since=since,
        until=until,
    )


@dataclass(frozen=True, kw_only=True)
class IntegritySummary:
    violations: int
    critical: int
    payout_accuracy: float | None
    house_way_compliance: float | None
    open_alerts: int


def integrity_summary(
    by_rule: pd.DataFrame,
    payouts: pd.DataFrame,
    way: pd.DataFrame,
    detail: pd.DataFrame,
    alerts: pd.DataFrame,
) -> IntegritySummary:
    recorded = _int(payouts["recorded_lines"].sum())
    hands = _int(way["hands_set"].sum())
    return IntegritySummary(
        violations=_int(by_rule["violations"].sum()),
        critical=_int(by_rule["critical"].sum()),
        payout_accuracy=_int(payouts["accurate_lines"].sum()) / recorded if recorded else None,
        house_way_compliance=1 - _int(way["house_way_violations"].sum()) / hands if hands else None,
        open_alerts=int((~detail["acknowledged"]).sum() + (~alerts["acknowledged"]).sum()),
    )


WITHHELD_NOTE = "written by a role that sees figures you do not"


def audit_trail() -> pd.DataFrame:
    """The acknowledgements, newest first. A note is free text: one written by a role with a
    measure the reader lacks (a manager's, for surveillance) may quote it, and is withheld."""
    trail = acks.audit_trail(current_store().acks)
    grant = viewer()
    readable = [
        role in set(auth.Role) and auth.GRANTS[auth.Role(role)].measures <= grant.measures
        for role in trail["role"]
    ]
    trail["note"] = trail["note"].where(readable, f"(withheld: {WITHHELD_NOTE})")
    return trail


def open_alert_choices(detail: pd.DataFrame, alerts: pd.DataFrame) -> dict[str, str]:
    """Alerts nobody acknowledged yet, as {choice key: label} for a picker."""
    choices: dict[str, str] = {}
    for a in alerts[~alerts["acknowledged"]].to_dict("records"):
        p_value = "" if pd.isna(a["p_value"]) else f" · p = {a['p_value']:.3g}"
        choices[f"{acks.AlertKind.STATISTICAL.value}:{a['alert_id']}"] = (
            f"statistical · {a['test_name']} · {a['subject_id']}{p_value}"
        )
    for v in detail[~detail["acknowledged"]].to_dict("records"):
        choices[f"{acks.AlertKind.VIOLATION.value}:{v['violation_id']}"] = (
            f"violation · {v['rule_id']} · {v['severity']} · {v['table_id']} · "
            f"{pd.Timestamp(v['occurred_at']):%Y-%m-%d %H:%M:%S}"
        )
    return choices


def alert_key(choice: str) -> acks.AlertKey:
    kind, _, alert_id = choice.partition(":")
    return acks.AlertKey(kind=acks.AlertKind(kind), alert_id=alert_id)


def payout_accuracy(f: Filters) -> pd.DataFrame:
    """Per dealer: recorded payouts equal to the rules' payout, money over- and underpaid, Pai
    Gow commission not taken (PGP-A17c, DEF-M2)."""
    extra, params = _dealers_in(f)
    return _frame(
        f"""
        SELECT dealer_id,
               sum(recorded_lines)::BIGINT AS recorded_lines,
               sum(accurate_lines)::BIGINT AS accurate_lines,
               sum(accurate_lines) / nullif(sum(recorded_lines), 0) AS payout_accuracy,
               sum(overpaid_lines)::BIGINT AS overpaid_lines,
               sum(overpaid_cents)::BIGINT AS overpaid_cents,
               sum(underpaid_lines)::BIGINT AS underpaid_lines,
               sum(underpaid_cents)::BIGINT AS underpaid_cents,
               sum(commission_short_lines)::BIGINT AS commission_short_lines,
               sum(commission_shortfall_cents)::BIGINT AS commission_shortfall_cents
        FROM agg_dealer_payouts WHERE gaming_date BETWEEN ? AND ?{extra}
        GROUP BY dealer_id ORDER BY payout_accuracy, dealer_id
        """,
        [f.start, f.end, *params],
    )


def house_way(f: Filters) -> pd.DataFrame:
    """Per dealer: Pai Gow hands set and the share set by the posted house way (PGP-A13c)."""
    extra, params = _dealers_in(f)
    return _frame(
        f"""
        SELECT dealer_id, sum(hands_set)::BIGINT AS hands_set,
               sum(house_way_violations)::BIGINT AS house_way_violations,
               1 - sum(house_way_violations) / nullif(sum(hands_set), 0) AS house_way_compliance
        FROM agg_dealer_house_way WHERE gaming_date BETWEEN ? AND ?{extra}
        GROUP BY dealer_id HAVING sum(hands_set) > 0
        ORDER BY house_way_compliance, dealer_id
        """,
        [f.start, f.end, *params],
    )


def statistical_alerts(f: Filters) -> pd.DataFrame:
    """Failed statistical tests of the range (and those over all history), each with what was
    tested, the statistic, p-value or z, threshold, a plain-language reading and whether it
    was acknowledged."""
    frame = _frame(
        """
        SELECT alert_id, test_name, subject_type, subject_id, gaming_date, shift_no,
               sample_size, statistic_name, statistic, degrees_of_freedom, z_score, p_value,
               threshold_rule, threshold, observed, expected, interval_low, interval_high
        FROM fct_statistical_alerts
        WHERE gaming_date BETWEEN ? AND ? OR gaming_date IS NULL
        ORDER BY p_value NULLS LAST, alert_id
        """,
        [f.start, f.end],
    )
    money = viewer().money
    frame["explanation"] = [explain(row, money=money) for row in frame.to_dict("records")]
    done = acks.acknowledged(current_store().acks, acks.AlertKind.STATISTICAL)
    frame["acknowledged"] = frame["alert_id"].isin(done)
    return frame
