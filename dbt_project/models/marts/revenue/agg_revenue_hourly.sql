{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='gaming_date') }}
{%- set affected = affected_days() %}

-- Revenue's additive cell: one row per (gaming_date, shift_no, hour_start, table_id, dealer_id)
-- of the rounds with bets. Every measure is a sum (or a count of rows that belong to
-- one cell), so a reader sums cells over any filter and breakdown of these columns and derives
-- rates afterwards; distinct players are not additive and come from fct_positions. The hold
-- band's sums are the players' positions' (fct_positions, without the house's own bet) against
-- their expected house result given the cards and decisions as played, as
-- stat_hold_vs_theoretical computes it; theoretical_win_cents is the optimal-play theoretical
-- (DEF-ACC2), revenue's yardstick. Incremental by day.
with rounds as (
    select
        round_id, gaming_date, shift_no, time_bucket(interval 1 hour, ended_at) as hour_start,
        casino_id, game, table_id, dealer_id, bet_lines, wagers, handle_cents,
        settled_house_result_cents, commission_cents, payout_cents, capped_cents,
        capped_payouts, theoretical_win_cents, seconds_in_play
    from {{ ref('fct_rounds') }}
    where bet_lines > 0 and {{ affected }}
),

-- Positions count in their round's cell: a round whose dealer changed before it settled
-- carries the dealer who started it, its lines the one at settlement. The hold band is the
-- rounds whose every player position the game valued (int_position_expectations): the
-- expected house result given the cards and decisions as played, its variance the round's.
positions as (
    select
        p.round_id,
        sum(p.wager_cents) as band_handle_cents,
        sum(p.house_result_cents) as band_observed_cents,
        -- each term rounded to a decimal, so the sums are exact whatever order a build adds
        -- them in (a double sum differed in its last digits from build to build)
        sum(e.expected_house_cents::decimal(20, 6)) as band_expected_cents,
        any_value(e.round_variance)::decimal(38, 6) as band_variance_cents2,
        count(*) = count(e.round_id) as valued
    from {{ ref('fct_positions') }} as p
    left join {{ position_expectations(affected) }} as e
        on e.round_id = p.round_id and e.seat = {{ player_seat('p') }}
    where p.wager_cents > 0 and {{ affected }}
    group by p.round_id
    having valued
),

cells as (
    select
        r.gaming_date, r.shift_no, r.hour_start, r.casino_id, r.game, r.table_id, r.dealer_id,
        count(*) as rounds,
        sum(r.bet_lines) as bet_lines,
        sum(r.wagers) as wagers,
        sum(r.handle_cents)::bigint as handle_cents,
        sum(r.settled_house_result_cents)::bigint as house_result_cents,
        sum(r.commission_cents)::bigint as commission_cents,
        sum(r.payout_cents)::bigint as payout_cents,
        sum(r.capped_cents)::bigint as capped_cents,
        sum(r.capped_payouts) as capped_payouts,
        sum(r.theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents,
        sum(r.seconds_in_play) as seconds_in_play,
        sum(p.band_handle_cents)::bigint as band_handle_cents,
        sum(p.band_observed_cents)::bigint as band_observed_cents,
        sum(p.band_expected_cents)::decimal(20, 6) as band_expected_cents,
        sum(p.band_variance_cents2)::decimal(38, 6) as band_variance_cents2
    from rounds as r
    left join positions as p on p.round_id = r.round_id
    group by
        r.gaming_date, r.shift_no, r.hour_start, r.casino_id, r.game, r.table_id, r.dealer_id
)

select
    concat_ws('|', gaming_date, coalesce(shift_no::varchar, '-'), hour_start, table_id,
        coalesce(dealer_id, '-')) as cell_id,
    *,
    (select max(lake_row_id) from {{ ref('fct_rounds') }}) as source_lake_row_id
from cells
