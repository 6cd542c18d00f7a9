{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='gaming_date') }}
{%- set affected = affected_days() %}

-- Revenue per bet spot in agg_revenue_hourly's cells: one row per (gaming_date, shift_no,
-- hour_start, table_id, dealer_id, spot). A round counts once per spot played in it, and
-- its seconds in play with it; every measure is additive across rows (a round belongs to one
-- cell, and its lines count in its cell). Positions span spots, so there is no hold band here.
-- Incremental by day.
with rounds as (
    select
        round_id, gaming_date, shift_no, time_bucket(interval 1 hour, ended_at) as hour_start,
        casino_id, game, table_id, dealer_id, seconds_in_play
    from {{ ref('fct_rounds') }}
    where bet_lines > 0 and {{ affected }}
),

round_spots as (
    select
        round_id,
        spot,
        count(*) as bet_lines,
        count(*) filter (where wager_cents > 0) as wagers,
        sum(wager_cents) as handle_cents,
        sum(house_result_cents) as house_result_cents,
        sum(commission_cents) as commission_cents,
        sum(payout_cents) as payout_cents,
        sum(capped_cents) as capped_cents,
        count(*) filter (where capped_cents > 0) as capped_payouts,
        sum(theoretical_win_cents) as theoretical_win_cents
    from {{ ref('fct_bets') }}
    where {{ affected }}
    group by round_id, spot
),

cells as (
    select
        r.gaming_date, r.shift_no, r.hour_start, r.casino_id, r.game, r.table_id, r.dealer_id,
        s.spot,
        count(*) as rounds,
        sum(s.bet_lines) as bet_lines,
        sum(s.wagers) as wagers,
        sum(s.handle_cents)::bigint as handle_cents,
        sum(s.house_result_cents)::bigint as house_result_cents,
        sum(s.commission_cents)::bigint as commission_cents,
        sum(s.payout_cents)::bigint as payout_cents,
        sum(s.capped_cents)::bigint as capped_cents,
        sum(s.capped_payouts) as capped_payouts,
        sum(s.theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents,
        sum(r.seconds_in_play) as seconds_in_play
    from round_spots as s
    inner join rounds as r on r.round_id = s.round_id
    group by
        r.gaming_date, r.shift_no, r.hour_start, r.casino_id, r.game, r.table_id, r.dealer_id,
        s.spot
)

select
    concat_ws('|', gaming_date, coalesce(shift_no::varchar, '-'), hour_start, table_id,
        coalesce(dealer_id, '-'), spot) as cell_id,
    *,
    (select max(lake_row_id) from {{ ref('fct_rounds') }}) as source_lake_row_id
from cells
