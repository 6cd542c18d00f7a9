{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='gaming_date') }}

-- Revenue's additive cell: one row per (gaming_date, shift_no, hour_start, game, table_id,
-- dealer_id) of the rounds with bets. Every measure is a sum (or a count of rows that belong to
-- one cell), so a reader sums cells over any filter and breakdown of these columns and derives
-- rates afterwards; distinct players are not additive and come from fct_positions. The hold
-- band's sums are the positions' (fct_positions, without the house's own bet): its variance is
-- Σ wager² × the variance per unit of the position's profile and mix of wagers
-- (stat_profile_dispersion), as stat_hold_vs_theoretical computes it. Incremental by day.
with rounds as (
    select
        gaming_date, shift_no, time_bucket(interval 1 hour, ended_at) as hour_start, casino_id,
        game, table_id, dealer_id,
        count(*) as rounds,
        sum(bet_lines) as bet_lines,
        sum(handle_cents) as handle_cents,
        sum(settled_house_result_cents) as house_result_cents,
        sum(commission_cents) as commission_cents,
        sum(payout_cents) as payout_cents,
        sum(capped_cents) as capped_cents,
        sum(theoretical_win_cents) as theoretical_win_cents,
        sum(seconds_in_play) as seconds_in_play
    from {{ ref('fct_rounds') }}
    where bet_lines > 0 and {{ affected_days() }}
    group by all
),

lines as (
    -- a line is settled when its round ends: settled_at = the round's ended_at
    select
        gaming_date, shift_no, time_bucket(interval 1 hour, settled_at) as hour_start, game,
        table_id, dealer_id,
        count(*) filter (where wager_cents > 0) as wagers,
        count(*) filter (where capped_cents > 0) as capped_payouts
    from {{ ref('fct_bets') }}
    where {{ affected_days() }}
    group by all
),

positions as (
    select
        p.gaming_date, p.shift_no, time_bucket(interval 1 hour, p.settled_at) as hour_start,
        p.game, p.table_id, p.dealer_id,
        sum(p.wager_cents) filter (where p.wager_cents > 0) as band_handle_cents,
        sum(p.house_result_cents) filter (where p.wager_cents > 0) as band_observed_cents,
        sum(p.theoretical_win_cents) filter (where p.wager_cents > 0) as band_expected_cents,
        sum(p.wager_cents::double * p.wager_cents * d.result_variance_per_unit)
            filter (where p.wager_cents > 0) as band_variance_cents2
    from {{ ref('fct_positions') }} as p
    left join {{ ref('stat_profile_dispersion') }} as d
        using (profile, profile_version, spot_mix)
    where {{ affected_days() }}
    group by all
)

select
    concat_ws('|', r.gaming_date, coalesce(r.shift_no::varchar, '-'), r.hour_start, r.table_id,
        coalesce(r.dealer_id, '-')) as cell_id,
    r.gaming_date,
    r.shift_no,
    r.hour_start,
    r.casino_id,
    r.game,
    r.table_id,
    r.dealer_id,
    r.rounds,
    r.bet_lines,
    coalesce(l.wagers, 0) as wagers,
    r.handle_cents::bigint as handle_cents,
    r.house_result_cents::bigint as house_result_cents,
    r.commission_cents::bigint as commission_cents,
    r.payout_cents::bigint as payout_cents,
    r.capped_cents::bigint as capped_cents,
    coalesce(l.capped_payouts, 0) as capped_payouts,
    r.theoretical_win_cents::decimal(20, 6) as theoretical_win_cents,
    r.seconds_in_play,
    p.band_handle_cents::bigint as band_handle_cents,
    p.band_observed_cents::bigint as band_observed_cents,
    p.band_expected_cents::decimal(20, 6) as band_expected_cents,
    p.band_variance_cents2,
    (select max(lake_row_id) from {{ ref('fct_rounds') }}) as source_lake_row_id
from rounds as r
left join lines as l
    on l.gaming_date = r.gaming_date and l.shift_no is not distinct from r.shift_no
    and l.hour_start = r.hour_start and l.table_id = r.table_id
    and l.dealer_id is not distinct from r.dealer_id
left join positions as p
    on p.gaming_date = r.gaming_date and p.shift_no is not distinct from r.shift_no
    and p.hour_start = r.hour_start and p.table_id = r.table_id
    and p.dealer_id is not distinct from r.dealer_id
