"""The Floor: every table open now or with play on a day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pandas as pd

from dashboards import acks
from dashboards.data.core import (
    _frame,
    _int,
    current_store,
)


@dataclass(frozen=True, kw_only=True)
class FloorView:
    day: date
    tables: pd.DataFrame
    rounds: int
    handle_cents: int
    house_result_cents: int
    open_alerts: int
    open_critical: int


def floor(day: date) -> FloorView:
    """Every table open now or with play on `day`: game, dealer on duty, pace, handle, house
    result and alerts nobody acknowledged yet."""
    tables = _frame(
        """
        WITH day_rounds AS (
            SELECT table_id,
                   count(*) AS rounds,
                   sum(seconds_in_play) AS seconds_in_play,
                   sum(handle_cents)::BIGINT AS handle_cents,
                   sum(settled_house_result_cents)::BIGINT AS house_result_cents,
                   sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents,
                   arg_max(dealer_id, started_at) AS dealer_id,
                   max(coalesce(ended_at, started_at)) AS last_round_at
            FROM fct_rounds WHERE gaming_date = ? GROUP BY table_id
        ),
        sessions AS (
            SELECT table_id, arg_max(table_closed_at IS NULL, opened_at) AS is_open
            FROM fct_table_sessions GROUP BY table_id
        )
        SELECT t.table_id, t.game, coalesce(s.is_open, false) AS is_open, d.dealer_id,
               coalesce(d.rounds, 0) AS rounds,
               d.rounds / nullif(d.seconds_in_play / 3600.0, 0) AS rounds_per_hour,
               coalesce(d.handle_cents, 0) AS handle_cents,
               coalesce(d.house_result_cents, 0) AS house_result_cents,
               d.theoretical_win_cents, d.last_round_at
        FROM dim_tables AS t
        LEFT JOIN day_rounds AS d USING (table_id)
        LEFT JOIN sessions AS s USING (table_id)
        WHERE d.rounds IS NOT NULL OR s.is_open
        ORDER BY t.table_id
        """,
        [day],
    )
    violations = _frame(
        "SELECT table_id, violation_id AS alert_id, severity FROM fct_violations "
        "WHERE gaming_date = ?",
        [day],
    )
    statistical = _frame(
        "SELECT subject_id AS table_id, alert_id FROM fct_statistical_alerts "
        "WHERE subject_type = 'table' AND (gaming_date = ? OR gaming_date IS NULL)",
        [day],
    )
    store = current_store()
    open_violations = violations[
        ~violations["alert_id"].isin(acks.acknowledged(store.acks, acks.AlertKind.VIOLATION))
    ]
    open_statistical = statistical[
        ~statistical["alert_id"].isin(acks.acknowledged(store.acks, acks.AlertKind.STATISTICAL))
    ]
    counts = pd.concat([open_violations["table_id"], open_statistical["table_id"]]).value_counts()
    tables["open_alerts"] = tables["table_id"].map(counts).fillna(0).astype("int64")
    return FloorView(
        day=day,
        tables=tables,
        rounds=_int(tables["rounds"].sum()),
        handle_cents=_int(tables["handle_cents"].sum()),
        house_result_cents=_int(tables["house_result_cents"].sum()),
        open_alerts=len(open_violations) + len(open_statistical),
        open_critical=int((open_violations["severity"] == "critical").sum()),
    )
