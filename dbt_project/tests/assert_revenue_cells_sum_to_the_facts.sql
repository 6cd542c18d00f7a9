-- agg_revenue_hourly and agg_revenue_spot_hourly are the cells the dashboards sum: per casino
-- day, their sums must equal the facts they summarise (fct_rounds for the round measures,
-- fct_bets for the lines, fct_positions and int_position_expectations for the hold band). Any row returned is a mismatch.
-- Only the days with rounds not yet tested (all days when none were), listed before the test
-- runs (macros/affected_days.sql).
{%- set days = '(null)' -%}
{%- if execute -%}
    {%- set days = listed_days("select distinct gaming_date from " ~ ref('fct_rounds')
        ~ " where bet_lines > 0 and lake_row_id > " ~ tested_up_to('rounds')) -%}
{%- endif %}
with facts as (
    select
        r.gaming_date,
        count(*) as rounds,
        sum(r.bet_lines) as bet_lines,
        sum(r.handle_cents) as handle_cents,
        sum(r.settled_house_result_cents) as house_result_cents,
        sum(r.seconds_in_play) as seconds_in_play,
        sum(r.theoretical_win_cents) as theoretical_win_cents
    from {{ ref('fct_rounds') }} as r
    where r.bet_lines > 0 and r.gaming_date in {{ days }}
    group by r.gaming_date
),

lines as (
    select
        gaming_date,
        count(*) filter (where wager_cents > 0) as wagers,
        count(*) filter (where capped_cents > 0) as capped_payouts,
        sum(payout_cents) as payout_cents,
        sum(commission_cents) as commission_cents,
        count(distinct (round_id, spot)) as round_spots
    from {{ ref('fct_bets') }}
    where gaming_date in {{ days }}
    group by gaming_date
),

positions as (  -- the band: rounds whose every player position the game valued
    select gaming_date, sum(handle_cents) as band_handle_cents
    from (
        select any_value(p.gaming_date) as gaming_date, sum(p.wager_cents) as handle_cents
        from {{ ref('fct_positions') }} as p
        left join {{ position_expectations('gaming_date in ' ~ days) }} as e
            on e.round_id = p.round_id and e.seat = {{ player_seat('p') }}
        where p.wager_cents > 0 and p.gaming_date in {{ days }}
        group by p.round_id
        having count(*) = count(e.round_id)
    )
    group by gaming_date
),

cells as (
    select
        gaming_date, sum(rounds) as rounds, sum(bet_lines) as bet_lines,
        sum(wagers) as wagers, sum(handle_cents) as handle_cents,
        sum(house_result_cents) as house_result_cents, sum(payout_cents) as payout_cents,
        sum(commission_cents) as commission_cents, sum(capped_payouts) as capped_payouts,
        sum(seconds_in_play) as seconds_in_play,
        sum(theoretical_win_cents) as theoretical_win_cents,
        sum(band_handle_cents) as band_handle_cents
    from {{ ref('agg_revenue_hourly') }}
    where gaming_date in {{ days }}
    group by gaming_date
),

spot_cells as (
    select
        gaming_date, sum(rounds) as round_spots, sum(bet_lines) as bet_lines,
        sum(handle_cents) as handle_cents, sum(house_result_cents) as house_result_cents,
        sum(capped_payouts) as capped_payouts
    from {{ ref('agg_revenue_spot_hourly') }}
    where gaming_date in {{ days }}
    group by gaming_date
)

select f.gaming_date, f.*, l.*, p.*, c.*, s.*
from facts as f
left join lines as l using (gaming_date)
left join positions as p using (gaming_date)
left join cells as c using (gaming_date)
left join spot_cells as s using (gaming_date)
where c.rounds is distinct from f.rounds
    or c.bet_lines is distinct from f.bet_lines
    or c.handle_cents is distinct from f.handle_cents
    or c.house_result_cents is distinct from f.house_result_cents
    or c.seconds_in_play is distinct from f.seconds_in_play
    or c.theoretical_win_cents is distinct from f.theoretical_win_cents
    or c.wagers is distinct from l.wagers
    or c.capped_payouts is distinct from l.capped_payouts
    or c.payout_cents is distinct from l.payout_cents
    or c.commission_cents is distinct from l.commission_cents
    or c.band_handle_cents is distinct from p.band_handle_cents
    or s.round_spots is distinct from l.round_spots
    or s.bet_lines is distinct from f.bet_lines
    or s.handle_cents is distinct from f.handle_cents
    or s.house_result_cents is distinct from f.house_result_cents
    or s.capped_payouts is distinct from l.capped_payouts
