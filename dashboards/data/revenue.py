"""Revenue: handle, house result, theoretical win and its band by any breakdown, and the table
accounting (DEF-ACC1, DEF-ACC2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from dashboards.data.core import (
    Z_95,
    Filters,
    _frame,
    _int,
    _where,
)

Breakdown = Literal["all", "game", "table", "dealer", "shift", "spot", "day", "hour"]
# Group-by expressions (fixed text, never from input) by breakdown: on fct_rounds, and on
# fct_bets and fct_positions (a line is settled when its round ends: settled_at = ended_at).
_KEYS: dict[str, tuple[str, str]] = {
    "all": ("'all'", "'all'"),
    "game": ("game", "game"),
    "table": ("table_id", "table_id"),
    "dealer": ("dealer_id", "dealer_id"),
    "shift": ("shift_no", "shift_no"),
    "day": ("gaming_date", "gaming_date"),
    "hour": ("time_bucket(INTERVAL 1 HOUR, ended_at)", "time_bucket(INTERVAL 1 HOUR, settled_at)"),
}


def revenue(f: Filters, by: Breakdown) -> pd.DataFrame:
    """Revenue of the rounds matching `f`, one row per `by` group (`key`); see revenue_sets."""
    return revenue_sets(f, (by,))[by]


def revenue_sets(f: Filters, bys: Sequence[Breakdown]) -> dict[Breakdown, pd.DataFrame]:
    """Revenue of the rounds matching `f` by each breakdown in `bys`, one row per group
    (`key`): handle, house result, commission, payouts, caps, theoretical win (DEF-ACC2), hold,
    average bet, players, rounds, rounds per hour, and the 95 % band of the players' positions'
    house result around their theoretical win (the marts' method: Var = Σ wager² × the
    variance per unit of the position's profile and mix of wagers).

    The figures are agg_revenue's, for any combination of filters: money and rounds from
    fct_rounds (each round's lines summed), bet counts from fct_bets, capped payouts from
    fct_capped_payouts, players and the band from fct_positions, so the 7.5 million lines of a
    million rounds are read only for counts; every breakdown comes from one scan of each
    (GROUPING SETS).
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
        [
            "{t}.level = r.level",
            *(f"{{t}}.k{i} IS NOT DISTINCT FROM r.k{i}" for i in range(len(sets))),
        ]
    )
    frame = _frame(
        f"""
        WITH rounds AS (
            SELECT {names}, grouping({names}) AS level,
                   count(*) AS rounds,
                   sum(bet_lines)::BIGINT AS bet_lines,
                   sum(handle_cents)::BIGINT AS handle_cents,
                   sum(settled_house_result_cents)::BIGINT AS house_result_cents,
                   sum(commission_cents)::BIGINT AS commission_cents,
                   sum(payout_cents)::BIGINT AS payout_cents,
                   sum(capped_cents)::BIGINT AS capped_cents,
                   sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents,
                   sum(seconds_in_play) AS seconds_in_play
            FROM (
                SELECT {_keys(sets, 0)}, bet_lines, handle_cents, settled_house_result_cents,
                       commission_cents, payout_cents, capped_cents, theoretical_win_cents,
                       seconds_in_play
                FROM fct_rounds WHERE bet_lines > 0 AND {where}
            )
            GROUP BY {_grouping(sets)}
        ),
        lines AS (
            SELECT {names}, grouping({names}) AS level,
                   count(*) FILTER (WHERE wager_cents > 0) AS wagers
            FROM (SELECT {_keys(sets, 1)}, wager_cents FROM fct_bets WHERE {where})
            GROUP BY {_grouping(sets)}
        ),
        capped AS (
            SELECT {names}, grouping({names}) AS level, count(*) AS capped_payouts
            FROM (SELECT {_keys(sets, 1)} FROM fct_capped_payouts WHERE {where})
            GROUP BY {_grouping(sets)}
        ),
        positions AS ({_positions(sets, where)})
        SELECT r.level, {", ".join(f"r.k{i}" for i in range(len(sets)))},
               r.bet_lines, l.wagers, r.rounds, p.players, r.handle_cents,
               r.house_result_cents, r.commission_cents, r.payout_cents, r.capped_cents,
               coalesce(c.capped_payouts, 0) AS capped_payouts, r.theoretical_win_cents,
               r.seconds_in_play / 3600.0 AS hours_in_play,
               r.rounds / nullif(r.seconds_in_play / 3600.0, 0) AS rounds_per_hour,
               r.house_result_cents / nullif(r.handle_cents, 0) AS hold_pct,
               r.theoretical_win_cents / nullif(r.handle_cents, 0) AS theoretical_hold_pct,
               r.handle_cents / nullif(l.wagers, 0) AS average_bet_cents,
               {_BAND}
        FROM rounds AS r
        LEFT JOIN lines AS l ON {joined.format(t="l")}
        LEFT JOIN capped AS c ON {joined.format(t="c")}
        LEFT JOIN positions AS p ON {joined.format(t="p")}
        ORDER BY r.level, {names}
        """,
        [*params, *params, *params, *params],
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
    """`expr AS k0, expr AS k1, ...`: the breakdowns' keys on fct_rounds (0) or the lines (1)."""
    return ", ".join(f"{_KEYS[by][side]} AS k{i}" for i, by in enumerate(sets))


def _grouping(sets: Sequence[Breakdown]) -> str:
    return f"GROUPING SETS ({', '.join(f'(k{i})' for i in range(len(sets)))})"


def _level(count: int, i: int) -> int:
    """grouping(k0, ..., kn) of the set grouped by k_i alone: a bit set for every other key."""
    return ((1 << count) - 1) & ~(1 << (count - 1 - i))


def _positions(sets: Sequence[Breakdown], where: str) -> str:
    """Players and the hold band per group of positions (fct_positions leaves the house's own
    bet out): Var(house result) = Σ wager² × the variance per unit of the position's profile
    and mix of wagers (stat_profile_dispersion), as stat_hold_vs_theoretical computes it."""
    names = ", ".join(f"k{i}" for i in range(len(sets)))
    return f"""
            SELECT {names}, grouping({names}) AS level,
                   count(DISTINCT player_ref) FILTER (WHERE bettor = 'player') AS players,
                   sum(wager_cents) FILTER (WHERE wager_cents > 0)::BIGINT AS band_handle_cents,
                   sum(house_result_cents) FILTER (WHERE wager_cents > 0)::BIGINT
                       AS band_observed_cents,
                   sum(theoretical_win_cents) FILTER (WHERE wager_cents > 0)::DOUBLE
                       AS band_expected_cents,
                   sqrt(sum(wager_cents::DOUBLE * wager_cents * result_variance_per_unit)
                       FILTER (WHERE wager_cents > 0)) AS sd_cents
            FROM (
                SELECT {_keys(sets, 1)}, p.player_ref, p.bettor, p.wager_cents,
                       p.house_result_cents, p.theoretical_win_cents, d.result_variance_per_unit
                FROM fct_positions AS p
                LEFT JOIN stat_profile_dispersion AS d
                    USING (profile, profile_version, spot_mix)
                WHERE {where}
            )
            GROUP BY {_grouping(sets)}"""


_BAND = f"""p.band_observed_cents, p.band_expected_cents, p.sd_cents,
               p.band_expected_cents - {Z_95} * p.sd_cents AS band_low_cents,
               p.band_expected_cents + {Z_95} * p.sd_cents AS band_high_cents,
               (p.band_observed_cents - p.band_expected_cents) / nullif(p.sd_cents, 0) AS z"""


def _revenue_by_spot(f: Filters) -> pd.DataFrame:
    """Revenue per bet spot, from the lines themselves (rounds and hours per spot count each
    round once per spot played in it, as agg_revenue does). Positions span spots: no band."""
    where, params = _where(f)
    return _frame(
        f"""
        WITH lines AS (
            SELECT spot AS key, round_id, wager_cents, house_result_cents, commission_cents,
                   payout_cents, capped_cents, theoretical_win_cents, player_ref, bettor
            FROM fct_bets WHERE {where}
        ),
        play AS (
            SELECT l.key, sum(r.seconds_in_play) AS seconds_in_play
            FROM (SELECT DISTINCT key, round_id FROM lines) AS l
            -- the same filter on the rounds, so only their rounds are hashed
            JOIN (SELECT round_id, seconds_in_play FROM fct_rounds WHERE {where}) AS r
                USING (round_id)
            GROUP BY l.key
        ),
        capped AS (
            SELECT spot AS key, count(*) AS capped_payouts
            FROM fct_capped_payouts WHERE {where} GROUP BY spot
        )
        SELECT key,
               count(*) AS bet_lines,
               count(*) FILTER (WHERE wager_cents > 0) AS wagers,
               count(DISTINCT round_id) AS rounds,
               count(DISTINCT player_ref) FILTER (WHERE bettor = 'player') AS players,
               sum(wager_cents)::BIGINT AS handle_cents,
               sum(house_result_cents)::BIGINT AS house_result_cents,
               sum(commission_cents)::BIGINT AS commission_cents,
               sum(payout_cents)::BIGINT AS payout_cents,
               sum(capped_cents)::BIGINT AS capped_cents,
               coalesce(any_value(c.capped_payouts), 0) AS capped_payouts,
               sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents,
               any_value(p.seconds_in_play) / 3600.0 AS hours_in_play,
               count(DISTINCT round_id) / nullif(any_value(p.seconds_in_play) / 3600.0, 0)
                   AS rounds_per_hour,
               sum(house_result_cents) / nullif(sum(wager_cents), 0) AS hold_pct,
               sum(theoretical_win_cents)::DOUBLE / nullif(sum(wager_cents), 0)
                   AS theoretical_hold_pct,
               sum(wager_cents) / nullif(count(*) FILTER (WHERE wager_cents > 0), 0)
                   AS average_bet_cents,
               NULL::BIGINT AS band_observed_cents, NULL::DOUBLE AS band_expected_cents,
               NULL::DOUBLE AS sd_cents, NULL::DOUBLE AS band_low_cents,
               NULL::DOUBLE AS band_high_cents, NULL::DOUBLE AS z
        FROM lines LEFT JOIN play AS p USING (key) LEFT JOIN capped AS c USING (key)
        GROUP BY key ORDER BY key
        """,
        [*params, *params, *params],
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
