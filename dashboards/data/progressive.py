"""Progressive: contributions, hits and the meter (DEF-THP4)."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd

from dashboards.data.core import (
    CHART_POINTS,
    Filters,
    _frame,
    _where,
)


def progressive_tables(f: Filters) -> pd.DataFrame:
    """Per progressive table over the range: contributions, hits, resets and the meter
    (the liability) at the start, the end and its highest (DEF-THP4)."""
    where, params = _where(f, dims=("table_id",))
    return _frame(
        f"""
        SELECT table_id,
               sum(contributions)::BIGINT AS contributions,
               sum(contributions_cents)::BIGINT AS contributions_cents,
               sum(hits)::BIGINT AS hits,
               sum(hits_cents)::BIGINT AS hits_cents,
               sum(meter_hits)::BIGINT AS meter_hits,
               sum(paid_from_meter_cents)::BIGINT AS paid_from_meter_cents,
               sum(resets)::BIGINT AS resets,
               arg_min(opening_meter_cents, gaming_date) AS opening_meter_cents,
               arg_max(closing_meter_cents, gaming_date) AS liability_cents,
               max(highest_meter_cents) AS highest_meter_cents
        FROM agg_progressive_daily WHERE {where}
        GROUP BY table_id ORDER BY table_id
        """,
        params,
    )


def progressive_daily(f: Filters) -> pd.DataFrame:
    where, params = _where(f, dims=("table_id",))
    return _frame(
        f"""
        SELECT gaming_date, sum(contributions_cents)::BIGINT AS contributions_cents,
               sum(hits_cents)::BIGINT AS hits_cents,
               sum(closing_meter_cents)::BIGINT AS liability_cents
        FROM agg_progressive_daily WHERE {where}
        GROUP BY gaming_date ORDER BY gaming_date
        """,
        params,
    )


def meter_series(f: Filters) -> pd.DataFrame:
    """The meter of each table over time, its last value in each of ~CHART_POINTS buckets."""
    where, params = _where(f, dims=("table_id",))
    bucket = max(60, int((f.end - f.start + timedelta(days=1)).total_seconds() / CHART_POINTS))
    return _frame(
        f"""
        SELECT table_id, time_bucket(to_seconds(?), occurred_at) AS bucket_at,
               arg_max(meter_after_cents, lake_row_id) AS meter_cents
        FROM fct_progressive_ledger WHERE {where}
        GROUP BY ALL ORDER BY table_id, bucket_at
        """,
        [bucket, *params],
    )


def progressive_hits(f: Filters, *, limit: int = 500) -> pd.DataFrame:
    where, params = _where(f, dims=("table_id",))
    return _frame(
        f"""
        SELECT occurred_at, table_id, round_id, seat, hit_hand, amount_cents,
               meter_before_cents, meter_after_cents, rule_ids
        FROM fct_progressive_ledger WHERE kind = 'hit' AND {where}
        ORDER BY occurred_at DESC, round_id, entry_no LIMIT ?
        """,
        [*params, limit],
    )
