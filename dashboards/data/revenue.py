"""Revenue: handle, house result, theoretical win and its band by any breakdown, and the table
accounting (DEF-ACC1, DEF-ACC2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import duckdb
import pandas as pd

from dashboards.data.core import (
    Z_95,
    Filters,
    _frame,
    _int,
    _where,
)

Breakdown = Literal["all", "game", "table", "dealer", "shift", "spot", "day", "hour"]
# Group-by expressions (fixed text, never from input) by breakdown: on the revenue cells
# (agg_revenue_hourly, agg_revenue_spot_hourly), and on fct_positions and fct_bets for the
# distinct players (a line is settled when its round ends: settled_at = ended_at).
_KEYS: dict[str, tuple[str, str]] = {
    "all": ("'all'", "'all'"),
    "game": ("game", "game"),
    "table": ("table_id", "table_id"),
    "dealer": ("dealer_id", "dealer_id"),
    "shift": ("shift_no", "shift_no"),
    "day": ("gaming_date", "gaming_date"),
    "hour": ("hour_start", "time_bucket(INTERVAL 1 HOUR, settled_at)"),
    "spot": ("spot", "spot"),
}
# The cells' sums, and what the pages derive from them (rates within each group).
_SUMS = """
    sum(rounds)::BIGINT AS rounds, sum(bet_lines)::BIGINT AS bet_lines,
    sum(wagers)::BIGINT AS wagers, sum(handle_cents)::BIGINT AS handle_cents,
    sum(house_result_cents)::BIGINT AS house_result_cents,
    sum(commission_cents)::BIGINT AS commission_cents,
    sum(payout_cents)::BIGINT AS payout_cents, sum(capped_cents)::BIGINT AS capped_cents,
    sum(capped_payouts)::BIGINT AS capped_payouts,
    sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents,
    sum(seconds_in_play) AS seconds_in_play"""
_RATES = """
    r.seconds_in_play / 3600.0 AS hours_in_play,
    r.rounds / nullif(r.seconds_in_play / 3600.0, 0) AS rounds_per_hour,
    r.house_result_cents / nullif(r.handle_cents, 0) AS hold_pct,
    r.theoretical_win_cents / nullif(r.handle_cents, 0) AS theoretical_hold_pct,
    r.handle_cents / nullif(r.wagers, 0) AS average_bet_cents"""
_COLUMNS = """r.bet_lines, r.wagers, r.rounds, coalesce(p.players, 0) AS players, r.handle_cents,
    r.house_result_cents, r.commission_cents, r.payout_cents, r.capped_cents,
    r.capped_payouts, r.theoretical_win_cents"""


def revenue(f: Filters, by: Breakdown) -> pd.DataFrame:
    """Revenue of the rounds matching `f`, one row per `by` group (`key`); see revenue_sets."""
    return revenue_sets(f, (by,))[by]


def revenue_sets(f: Filters, bys: Sequence[Breakdown]) -> dict[Breakdown, pd.DataFrame]:
    """Revenue of the rounds matching `f` by each breakdown in `bys`, one row per group
    (`key`): handle, house result, commission, payouts, caps, theoretical win (DEF-ACC2), hold,
    average bet, players, rounds, rounds per hour, and the 95 % band of the players' positions'
    house result around their theoretical win.

    The figures are the marts': the revenue cells (agg_revenue_hourly, per day, shift, hour,
    table and dealer; agg_revenue_spot_hourly, the same per spot) summed over the filter, every
    breakdown from one scan (GROUPING SETS); only the distinct players are counted from the
    facts (fct_positions; fct_bets per spot).
    """
    found: dict[Breakdown, pd.DataFrame] = {}
    if "spot" in bys:
        found["spot"] = _revenue_by_spot(f)
    sets = [by for by in dict.fromkeys(bys) if by != "spot"]
    if not sets:
        return found
    where, params = _where(f)
    names = ", ".join(f"k{i}" for i in range(len(sets)))
    joined = " AND ".join(
        ["p.level = r.level", *(f"p.k{i} IS NOT DISTINCT FROM r.k{i}" for i in range(len(sets)))]
    )
    frame = _frame(
        f"""
        WITH rounds AS (
            SELECT {names}, grouping({names}) AS level, {_SUMS},
                   sum(band_observed_cents)::BIGINT AS band_observed_cents,
                   sum(band_expected_cents)::DOUBLE AS band_expected_cents,
                   sqrt(sum(band_variance_cents2)::DOUBLE) AS sd_cents
            FROM (SELECT {_keys(sets, 0)}, * FROM agg_revenue_hourly WHERE {where})
            GROUP BY {_grouping(sets)}
        ),
        players AS (
            SELECT {names}, grouping({names}) AS level,
                   count(DISTINCT player_ref) AS players
            FROM (
                SELECT {_keys(sets, 1)}, player_ref FROM fct_positions
                WHERE bettor = 'player' AND {where}
            )
            GROUP BY {_grouping(sets)}
        )
        SELECT r.level, {", ".join(f"r.k{i}" for i in range(len(sets)))}, {_COLUMNS}, {_RATES},
               {_BAND}
        FROM rounds AS r LEFT JOIN players AS p ON {joined}
        ORDER BY r.level, {names}
        """,
        [*params, *params],
    )
    others = [f"k{i}" for i in range(len(sets))]
    for i, by in enumerate(sets):
        mine = frame[frame["level"] == _level(len(sets), i)]
        found[by] = (
            mine.drop(columns=["level", *(k for k in others if k != f"k{i}")])
            .rename(columns={f"k{i}": "key"})
            .reset_index(drop=True)
        )
    return found


def _keys(sets: Sequence[Breakdown], side: int) -> str:
    """`expr AS k0, expr AS k1, ...`: the breakdowns' keys on the cells (0) or the facts (1)."""
    return ", ".join(f"{_KEYS[by][side]} AS k{i}" for i, by in enumerate(sets))


def _grouping(sets: Sequence[Breakdown]) -> str:
    return f"GROUPING SETS ({', '.join(f'(k{i})' for i in range(len(sets)))})"


def _level(count: int, i: int) -> int:
    """grouping(k0, ..., kn) of the set grouped by k_i alone: a bit set for every other key."""
    return ((1 << count) - 1) & ~(1 << (count - 1 - i))


_BAND = f"""r.band_observed_cents, r.band_expected_cents, r.sd_cents,
               r.band_expected_cents - {Z_95} * r.sd_cents AS band_low_cents,
               r.band_expected_cents + {Z_95} * r.sd_cents AS band_high_cents,
               (r.band_observed_cents - r.band_expected_cents) / nullif(r.sd_cents, 0) AS z"""


def _revenue_by_spot(f: Filters) -> pd.DataFrame:
    """Revenue per bet spot, summed from agg_revenue_spot_hourly (rounds and hours per spot
    count each round once per spot played in it); players from fct_bets. Positions span
    spots: no band."""
    where, params = _where(f)
    return _frame(
        f"""
        WITH rounds AS (
            SELECT spot AS key, {_SUMS}
            FROM agg_revenue_spot_hourly WHERE {where} GROUP BY spot
        ),
        players AS (
            SELECT spot AS key, count(DISTINCT player_ref) AS players
            FROM fct_bets WHERE bettor = 'player' AND {where} GROUP BY spot
        )
        SELECT r.key, {_COLUMNS}, {_RATES},
               NULL::BIGINT AS band_observed_cents, NULL::DOUBLE AS band_expected_cents,
               NULL::DOUBLE AS sd_cents, NULL::DOUBLE AS band_low_cents,
               NULL::DOUBLE AS band_high_cents, NULL::DOUBLE AS z
        FROM rounds AS r LEFT JOIN players AS p USING (key)
        ORDER BY r.key
        """,
        [*params, *params],
    )


def table_accounting(f: Filters) -> pd.DataFrame:
    """Table accounting (DEF-ACC1) per table over the chip-tray sessions opened in the range:
    drop, fills, credits, win and hold % of the closed sessions, beside the settled result
    (agg_table_accounting_daily's days summed; win, closing inventory and win - settled are
    the closed sessions' there)."""
    where, params = _where(f, dims=("game", "table_id"))
    return _frame(
        f"""
        SELECT table_id, game,
               sum(sessions)::BIGINT AS sessions,
               sum(closed_sessions)::BIGINT AS closed_sessions,
               sum(opening_inventory_cents)::BIGINT AS opening_inventory_cents,
               sum(closing_inventory_cents)::BIGINT AS closing_inventory_cents,
               sum(fills_cents)::BIGINT AS fills_cents,
               sum(credits_cents)::BIGINT AS credits_cents,
               sum(drop_cents)::BIGINT AS drop_cents,
               sum(closed_drop_cents)::BIGINT AS closed_drop_cents,
               sum(win_cents)::BIGINT AS win_cents,
               sum(win_cents) / nullif(sum(closed_drop_cents), 0) AS hold_pct,
               sum(settled_house_result_cents)::BIGINT AS settled_house_result_cents,
               sum(win_minus_settled_cents)::BIGINT AS win_minus_settled_cents
        FROM agg_table_accounting_daily WHERE {where}
        GROUP BY table_id, game ORDER BY table_id
        """,
        params,
    )


@dataclass(frozen=True, kw_only=True)
class AccountingTotals:
    drop_cents: int
    win_cents: int  # closed sessions only
    hold_pct: float | None  # win / drop of the closed sessions


def accounting_totals(accounting: pd.DataFrame) -> AccountingTotals:
    closed_drop = _int(accounting["closed_drop_cents"].sum())
    win = _int(accounting["win_cents"].sum())
    return AccountingTotals(
        drop_cents=_int(accounting["drop_cents"].sum()),
        win_cents=win,
        hold_pct=win / closed_drop if closed_drop else None,
    )


# The command that stores a comparison, for the page to name when none is stored.
WHAT_IF_COMMAND = "croupier what-if --profile tripoker/standard --store"


def what_if(f: Filters) -> pd.DataFrame | None:
    """The stored what-if comparisons (agg_what_if_daily, built on request by `croupier what-if
    --store`) over the filter's days, games and tables (dealers and shifts do not apply: it is
    kept per casino day and table): one row per target profile, decision mode and game, its
    first and last day, recorded and re-settled handle, house result and hold, their
    difference. None when none is stored."""
    where, params = _where(f, dims=("game", "table_id"))
    try:
        return _frame(
            f"""
            SELECT whatif_profile, decisions, game,
                   string_agg(DISTINCT recorded_profiles, ', ') AS recorded_profiles,
                   min(gaming_date) AS first_day, max(gaming_date) AS last_day,
                   sum(rounds)::BIGINT AS rounds,
                   sum(handle_cents)::BIGINT AS handle_cents,
                   sum(house_result_cents)::BIGINT AS house_result_cents,
                   sum(house_result_cents) / nullif(sum(handle_cents), 0) AS hold_pct,
                   sum(whatif_handle_cents)::BIGINT AS whatif_handle_cents,
                   sum(whatif_house_result_cents)::BIGINT AS whatif_house_result_cents,
                   sum(whatif_house_result_cents) / nullif(sum(whatif_handle_cents), 0)
                       AS whatif_hold_pct,
                   sum(difference_cents)::BIGINT AS difference_cents,
                   sum(decisions_changed)::BIGINT AS decisions_changed,
                   max(stored_at) AS stored_at, max(lake_snapshot_id) AS lake_snapshot_id
            FROM agg_what_if_daily WHERE {where}
            GROUP BY whatif_profile, decisions, game
            ORDER BY game, whatif_profile, decisions
            """,
            params,
        )
    except duckdb.CatalogException:  # never stored: the mart is built on request only
        return None
