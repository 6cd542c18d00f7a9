{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='gaming_date') }}
{%- set affected = affected_days() %}

-- Revenue per casino day or shift, by casino, game, table, dealer or spot: one row per
-- (period, gaming_date, shift_no, dimension, dimension_value). The measures are the revenue
-- cells' (agg_revenue_hourly, agg_revenue_spot_hourly) summed, so every figure is computed from
-- the facts once; distinct players come from the bet lines and rates are computed within each
-- group, never summed across groups. Incremental by day: a build recomputes and replaces only
-- the days that received new rounds.
with measures as (
    select
        case when grouping(shift_no) = 0 then 'shift' else 'day' end as period,
        gaming_date,
        shift_no,
        case
            when grouping(game) = 0 then 'game'
            when grouping(table_id) = 0 then 'table'
            when grouping(dealer_id) = 0 then 'dealer'
            else 'casino'
        end as dimension,
        case
            when grouping(game) = 0 then game
            when grouping(table_id) = 0 then table_id
            when grouping(dealer_id) = 0 then dealer_id
            else casino_id
        end as dimension_value,
        {{ revenue_sums() }}
    from {{ ref('agg_revenue_hourly') }}
    where {{ affected }}
    group by grouping sets (
        (gaming_date, casino_id), (gaming_date, game), (gaming_date, table_id),
        (gaming_date, dealer_id),
        (gaming_date, shift_no, casino_id), (gaming_date, shift_no, game),
        (gaming_date, shift_no, table_id), (gaming_date, shift_no, dealer_id)
    )
    union all
    select
        case when grouping(shift_no) = 0 then 'shift' else 'day' end,
        gaming_date,
        shift_no,
        'spot',
        spot,
        {{ revenue_sums() }}
    from {{ ref('agg_revenue_spot_hourly') }}
    where {{ affected }}
    group by grouping sets ((gaming_date, spot), (gaming_date, shift_no, spot))
),

players as (
    select
        case when grouping(shift_no) = 0 then 'shift' else 'day' end as period,
        gaming_date,
        shift_no,
        case
            when grouping(game) = 0 then 'game'
            when grouping(table_id) = 0 then 'table'
            when grouping(dealer_id) = 0 then 'dealer'
            when grouping(spot) = 0 then 'spot'
            else 'casino'
        end as dimension,
        case
            when grouping(game) = 0 then game
            when grouping(table_id) = 0 then table_id
            when grouping(dealer_id) = 0 then dealer_id
            when grouping(spot) = 0 then spot
            else casino_id
        end as dimension_value,
        count(distinct player_ref) as players
    from {{ ref('fct_bets') }}
    where bettor = 'player' and {{ affected }}
    group by grouping sets (
        (gaming_date, casino_id), (gaming_date, game), (gaming_date, table_id),
        (gaming_date, dealer_id), (gaming_date, spot),
        (gaming_date, shift_no, casino_id), (gaming_date, shift_no, game),
        (gaming_date, shift_no, table_id), (gaming_date, shift_no, dealer_id),
        (gaming_date, shift_no, spot)
    )
)

select
    concat_ws('|', m.period, m.gaming_date, m.shift_no, m.dimension, m.dimension_value)
        as revenue_id,
    m.period,
    m.gaming_date,
    m.shift_no,
    m.dimension,
    m.dimension_value,
    m.bet_lines,
    m.wagers,
    m.rounds,
    coalesce(p.players, 0) as players,
    m.handle_cents::bigint as handle_cents,
    m.house_result_cents::bigint as house_result_cents,
    m.commission_cents::bigint as commission_cents,
    m.payout_cents::bigint as payout_cents,
    m.capped_cents::bigint as capped_cents,
    m.capped_payouts,
    m.theoretical_win_cents::decimal(20, 6) as theoretical_win_cents,
    m.house_result_cents / nullif(m.handle_cents, 0) as hold_pct,
    m.theoretical_win_cents / nullif(m.handle_cents, 0) as theoretical_hold_pct,
    (m.house_result_cents - m.theoretical_win_cents) / nullif(m.handle_cents, 0)
        as hold_minus_theoretical_pct,
    m.house_result_cents / nullif(m.theoretical_win_cents, 0) as win_to_theoretical_ratio,
    m.handle_cents / nullif(m.wagers, 0) as average_bet_cents,
    m.seconds_in_play / 3600.0 as hours_in_play,
    m.rounds / nullif(m.seconds_in_play / 3600.0, 0) as rounds_per_hour,
    (select max(lake_row_id) from {{ ref('fct_rounds') }}) as source_lake_row_id
from measures as m
left join players as p
    on p.period = m.period and p.gaming_date = m.gaming_date
    and p.shift_no is not distinct from m.shift_no
    and p.dimension = m.dimension and p.dimension_value = m.dimension_value
