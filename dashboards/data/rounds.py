"""Round explorer: rounds near a time and everything about one round."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pandas as pd

from dashboards.data.core import (
    MAX_SEARCH,
    _frame,
    current_store,
)
from dashboards.data.prose import cards_of, event_details
from dashboards.rule_texts import text_of


@dataclass(frozen=True, kw_only=True)
class Round:
    """One round's record, its settlement lines, its violations and its events in order."""

    header: dict[str, Any]
    bets: pd.DataFrame
    violations: pd.DataFrame
    events: pd.DataFrame
    cards: pd.DataFrame
    rule_texts: dict[str, str] = field(default_factory=dict)


def clean_search(text: str) -> str | None:
    """The searched text trimmed, or None when empty, longer than MAX_SEARCH or holding a
    control character (a NUL reached DuckLake's file pruning unescaped and broke the query)."""
    text = text.strip()
    if not text or len(text) > MAX_SEARCH or any(not c.isprintable() for c in text):
        return None
    return text


def rounds_near(table_id: str, at: datetime, *, minutes: int = 30, limit: int = 50) -> pd.DataFrame:
    """Rounds of a table that started within `minutes` of `at` (UTC), nearest first."""
    return _frame(
        """
        SELECT round_id, started_at, ended_at, status, dealer_id, handle_cents,
               settled_house_result_cents AS house_result_cents, violations
        FROM fct_rounds
        WHERE table_id = ? AND started_at BETWEEN ? AND ?
        ORDER BY abs(epoch(started_at) - epoch(?::TIMESTAMPTZ)), round_id LIMIT ?
        """,
        [table_id, at - timedelta(minutes=minutes), at + timedelta(minutes=minutes), at, limit],
    )


def round_detail(round_id: str) -> Round | None:
    """Everything a supervisor needs to settle a dispute about one round, or None."""
    header = _frame(
        """
        SELECT round_id, table_id, game, dealer_id, deck_id, shuffler, banker_position,
               profile, profile_version, status, status_reason, started_at, ended_at,
               gaming_date, shift_no, handle_cents, settled_house_result_cents,
               commission_cents, payout_cents, capped_cents, violations, players
        FROM fct_rounds WHERE round_id = ?
        """,
        [round_id],
    )
    if header.empty:
        return None
    row = header.iloc[0].to_dict()
    day = row["gaming_date"]
    bets = _frame(
        """
        SELECT seat, spot, bettor, player_ref, wager_cents, outcome, payout_cents,
               capped_cents, commission_cents, net_cents, house_result_cents,
               recorded_paid_cents, recorded_commission_cents, payout_difference_cents,
               rule_ids
        FROM fct_bets WHERE round_id = ? AND gaming_date = ?
        ORDER BY seat, spot, bettor
        """,
        [round_id, day],
    )
    violations = _frame(
        """
        SELECT occurred_at, seq, rule_id, severity, check_name, evidence
        FROM fct_violations WHERE round_id = ? AND gaming_date = ?
        ORDER BY seq, rule_id
        """,
        [round_id, day],
    )
    raw_events = _round_events(row)
    cited = sorted(
        {r for ids in bets["rule_ids"] for r in (ids if ids is not None else [])}
        | set(violations["rule_id"])
    )
    return Round(
        header=row,
        bets=bets,
        violations=violations,
        events=event_details(raw_events),
        cards=cards_of(raw_events),
        rule_texts={r: text_of(r) for r in cited},
    )


def _round_events(row: dict[str, Any]) -> pd.DataFrame:
    """The round's events in `seq` order, from the lake (the events are the truth)."""
    columns = ["seq", "occurred_at", "event_type", "source_device", "payload"]
    if current_store().lake is None:
        return pd.DataFrame(columns=columns)
    started = pd.Timestamp(row["started_at"])
    ended = pd.Timestamp(row["ended_at"]) if not pd.isna(row["ended_at"]) else started
    # The time window lets DuckLake skip every file of other days.
    return _frame(
        f"""
        SELECT {", ".join(columns)} FROM lake.main.events
        WHERE table_id = ? AND round_id = ? AND occurred_at BETWEEN ? AND ?
        ORDER BY seq
        """,
        [
            row["table_id"],
            row["round_id"],
            (started - pd.Timedelta(hours=1)).to_pydatetime(),
            (ended + pd.Timedelta(hours=1)).to_pydatetime(),
        ],
    )
