"""Dealers: the scorecard per dealer."""

from __future__ import annotations

import pandas as pd

from dashboards.data.core import (
    Z_95,
    Filters,
    _dealers_in,
    _frame,
    _where,
)


def dealer_scorecards(f: Filters) -> pd.DataFrame:
    """Per dealer over the range: pace, error rate, payout accuracy, voids, house-way
    compliance and hold vs the expected result given the players' cards and decisions,
    with its 95 % band and z."""
    extra, params = _dealers_in(f)
    where, hold_params = _where(f, dims=("game", "table_id", "dealer_id"))
    return _frame(
        f"""
        WITH card AS (
            SELECT dealer_id,
                   sum(rounds)::BIGINT AS rounds,
                   sum(hours_in_play) AS hours_in_play,
                   sum(dealer_violations)::BIGINT AS dealer_violations,
                   sum(critical_violations)::BIGINT AS critical_violations,
                   sum(recorded_lines)::BIGINT AS recorded_lines,
                   sum(accurate_lines)::BIGINT AS accurate_lines,
                   sum(overpaid_cents)::BIGINT AS overpaid_cents,
                   sum(underpaid_cents)::BIGINT AS underpaid_cents,
                   sum(commission_shortfall_cents)::BIGINT AS commission_shortfall_cents,
                   sum(voided_rounds)::BIGINT AS voided_rounds
            FROM agg_dealer_scorecard_daily WHERE gaming_date BETWEEN ? AND ?{extra}
            GROUP BY dealer_id
        ),
        way AS (
            SELECT dealer_id, sum(hands_set) AS hands_set,
                   sum(house_way_violations) AS house_way_violations
            FROM agg_dealer_house_way WHERE gaming_date BETWEEN ? AND ?
            GROUP BY dealer_id
        ),
        hold AS (  -- the revenue cells' hold band: the players' positions
            SELECT dealer_id,
                   sum(band_handle_cents)::BIGINT AS band_handle_cents,
                   sum(band_observed_cents)::BIGINT AS band_observed_cents,
                   sum(band_expected_cents)::DOUBLE AS band_expected_cents,
                   sqrt(sum(band_variance_cents2)::DOUBLE) AS sd_cents
            FROM agg_revenue_hourly WHERE {where}
            GROUP BY dealer_id
        )
        SELECT c.dealer_id, c.rounds, c.hours_in_play,
               c.rounds / nullif(c.hours_in_play, 0) AS rounds_per_hour,
               c.dealer_violations, c.critical_violations,
               c.dealer_violations / nullif(c.rounds, 0) AS error_rate,
               c.recorded_lines, c.accurate_lines,
               c.accurate_lines / nullif(c.recorded_lines, 0) AS payout_accuracy,
               c.overpaid_cents, c.underpaid_cents, c.commission_shortfall_cents,
               c.voided_rounds, c.voided_rounds / nullif(c.rounds, 0) AS void_rate,
               w.hands_set AS pai_gow_hands_set,
               1 - w.house_way_violations / nullif(w.hands_set, 0) AS house_way_compliance,
               h.band_handle_cents AS handle_cents,
               h.band_observed_cents AS house_result_cents,
               h.band_expected_cents AS expected_house_cents,
               h.band_observed_cents / nullif(h.band_handle_cents, 0) AS hold_pct,
               h.band_expected_cents / nullif(h.band_handle_cents, 0) AS expected_hold_pct,
               (h.band_expected_cents - {Z_95} * h.sd_cents) / nullif(h.band_handle_cents, 0)
                   AS hold_band_low_pct,
               (h.band_expected_cents + {Z_95} * h.sd_cents) / nullif(h.band_handle_cents, 0)
                   AS hold_band_high_pct,
               (h.band_observed_cents - h.band_expected_cents) / nullif(h.sd_cents, 0) AS z
        FROM card AS c
        LEFT JOIN way AS w USING (dealer_id)
        LEFT JOIN hold AS h USING (dealer_id)
        ORDER BY error_rate DESC, c.dealer_id
        """,
        [f.start, f.end, *params, f.start, f.end, *hold_params],
    )
