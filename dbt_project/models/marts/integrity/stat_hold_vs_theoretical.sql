{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='gaming_date') }}

-- Hold vs expected per table, dealer and game, per casino day and per shift: is the house result
-- inside what fair cards give, GIVEN the cards and decisions the players made? Each position's
-- expected house result and variance over the cards its players could not see come from the
-- game's own math (int_position_expectations: exact for Tripóker, sampled for Hold'em calls and
-- Pai Gow with the sampling error inside the variance), so skill and luck are told apart: a
-- table of players who fold and set hands as people do is not a table that beats the house.
-- Positions of one round share the dealer's cards, so variances add per round (the round's
-- variance of its total), never per position. z = (house result - expected) / sd, two-sided
-- p-value, on subjects with at least var('min_hold_rounds') rounds (fewer: the z is shown, no
-- p-value); alerts decided by Benjamini-Hochberg within the test and casino day (fdr_cutoff).
-- The optimal-play theoretical win (DEF-ACC2) stays beside it, labelled, for revenue.
-- A round with a position the game could not value (bad data, a player-banker) is left out and
-- counted in untested_rounds. Incremental by day (every figure and alert is within a casino
-- day): a build recomputes and replaces only the days that received new positions.
{%- set affected = affected_days('fct_positions') %}
with expected as (
    select round_id, seat, expected_house_cents, round_variance
    from {{ position_expectations(affected) }}
),

positions as (
    select p.*, e.expected_house_cents, e.round_variance
    from {{ ref('fct_positions') }} as p
    left join expected as e
        on e.round_id = p.round_id and e.seat = {{ player_seat('p') }}
    where p.wager_cents > 0 and {{ affected }}
),

rounds as (
    select
        round_id,
        any_value(table_id) as table_id,
        any_value(dealer_id) as dealer_id,
        any_value(game) as game,
        any_value(gaming_date) as gaming_date,
        any_value(shift_no) as shift_no,
        count(*) as positions,
        count(*) = count(expected_house_cents) as tested,
        sum(wager_cents)::bigint as handle_cents,
        sum(house_result_cents)::bigint as house_result_cents,
        sum(theoretical_win_cents)::double as theoretical_win_cents,
        {{ exact_sum('expected_house_cents') }} as expected_house_cents,
        any_value(round_variance) as round_variance
    from positions
    group by round_id
),

grouped as (
    select
        case
            when grouping(table_id) = 0 then 'table'
            when grouping(dealer_id) = 0 then 'dealer'
            else 'game'
        end as subject_type,
        case
            when grouping(table_id) = 0 then table_id
            when grouping(dealer_id) = 0 then dealer_id
            else game
        end as subject_id,
        gaming_date,
        shift_no,
        count(*) filter (where tested) as tested_rounds,
        count(*) filter (where not tested) as untested_rounds,
        sum(positions) filter (where tested) as positions,
        coalesce(sum(handle_cents) filter (where tested), 0)::bigint as handle_cents,
        coalesce(sum(house_result_cents) filter (where tested), 0)::bigint as house_result_cents,
        {{ exact_sum('theoretical_win_cents', where='tested') }} as theoretical_win_cents,
        {{ exact_sum('expected_house_cents', where='tested') }} as expected_house_cents,
        sqrt({{ exact_sum('round_variance', where='tested') }}) as sd_cents
    from rounds
    group by grouping sets (
        (gaming_date, table_id), (gaming_date, dealer_id), (gaming_date, game),
        (gaming_date, shift_no, table_id), (gaming_date, shift_no, dealer_id),
        (gaming_date, shift_no, game)
    )
),

scored as (
    select
        *,
        (house_result_cents - expected_house_cents) / nullif(sd_cents, 0) as z,
        case when tested_rounds >= {{ var('min_hold_rounds') }} then
            {{ round_sig('2 * ' ~ normal_sf('abs((house_result_cents - expected_house_cents) / nullif(sd_cents, 0))')) }}
        end as p_value,
        'hold_vs_theoretical' as test_name
    from grouped
    where tested_rounds > 0
),

decided as (
    {{ fdr_cutoff('scored', 'test_name, gaming_date') }}
)

select
    concat_ws('|', test_name, subject_type, subject_id, gaming_date, shift_no) as alert_id,
    test_name,
    subject_type,
    subject_id,
    gaming_date,
    shift_no,
    tested_rounds as sample_size,
    'z' as statistic_name,
    round(z, 6) as statistic,
    null::integer as degrees_of_freedom,
    round(z, 6) as z_score,
    p_value,
    'p <= (BH)' as threshold_rule,
    coalesce(fdr_cutoff, fdr_bound) as threshold,
    house_result_cents::double as observed,
    round(expected_house_cents, 2) as expected,
    round(expected_house_cents - {{ z_95() }} * sd_cents, 2) as interval_low,
    round(expected_house_cents + {{ z_95() }} * sd_cents, 2) as interval_high,
    coalesce(p_value <= fdr_cutoff, false) as is_alert,
    positions,
    untested_rounds,
    handle_cents,
    house_result_cents,
    round(expected_house_cents, 2) as expected_house_cents,
    round(theoretical_win_cents, 2) as theoretical_win_cents,
    sd_cents,
    house_result_cents / nullif(handle_cents, 0) as hold_pct,
    expected_house_cents / nullif(handle_cents, 0) as expected_hold_pct,
    theoretical_win_cents / nullif(handle_cents, 0) as theoretical_hold_pct,
    (expected_house_cents - {{ z_95() }} * sd_cents) / nullif(handle_cents, 0)
        as hold_interval_low_pct,
    (expected_house_cents + {{ z_95() }} * sd_cents) / nullif(handle_cents, 0)
        as hold_interval_high_pct,
    (select max(lake_row_id) from {{ ref('fct_positions') }}) as source_lake_row_id
from decided
