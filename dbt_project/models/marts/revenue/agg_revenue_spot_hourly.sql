{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='gaming_date') }}

-- Revenue per bet spot in agg_revenue_hourly's cells: one row per (gaming_date, shift_no,
-- hour_start, game, table_id, dealer_id, spot). A round counts once per spot played in it, and
-- its seconds in play with it; every measure is additive across rows (a round belongs to one
-- cell). Positions span spots, so there is no hold band here. Incremental by day.
with rounds as (
    select round_id, seconds_in_play
    from {{ ref('fct_rounds') }}
    where bet_lines > 0 and {{ affected_days() }}
),

round_spots as (
    select
        round_id,
        spot,
        any_value(gaming_date) as gaming_date,
        any_value(shift_no) as shift_no,
        any_value(time_bucket(interval 1 hour, settled_at)) as hour_start,
        any_value(casino_id) as casino_id,
        any_value(game) as game,
        any_value(table_id) as table_id,
        any_value(dealer_id) as dealer_id,
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
    where {{ affected_days() }}
    group by round_id, spot
),

cells as (
    select
        s.gaming_date, s.shift_no, s.hour_start, s.casino_id, s.game, s.table_id, s.dealer_id,
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
        s.gaming_date, s.shift_no, s.hour_start, s.casino_id, s.game, s.table_id, s.dealer_id,
        s.spot
)

select
    concat_ws('|', gaming_date, coalesce(shift_no::varchar, '-'), hour_start, table_id,
        coalesce(dealer_id, '-'), spot) as cell_id,
    *,
    (select max(lake_row_id) from {{ ref('fct_rounds') }}) as source_lake_row_id
from cells
