-- Hold vs theoretical per table, dealer and game, per casino day and per shift: is the house
-- result inside the 95 % interval around the theoretical win (DEF-ACC2)? The interval comes
-- from the wagers themselves: Var(result) = sum over positions of wager^2 x the profile's
-- variance per unit (stat_profile_dispersion, per mix of wagers), so a few big bets widen it and many small ones
-- narrow it. z = (house result - theoretical) / sd; alert when |z| > 1.96.
with positions as (
    select p.*, d.result_variance_per_unit
    from {{ ref('fct_positions') }} as p
    inner join {{ ref('stat_profile_dispersion') }} as d
        on d.profile = p.profile and d.profile_version = p.profile_version
        and d.spot_mix = p.spot_mix
    where p.wager_cents > 0
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
        count(*) as positions,
        sum(wager_cents)::bigint as handle_cents,
        sum(house_result_cents)::bigint as house_result_cents,
        sum(theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents,
        sqrt(sum(wager_cents::double * wager_cents * result_variance_per_unit)) as sd_cents
    from positions
    group by grouping sets (
        (gaming_date, table_id), (gaming_date, dealer_id), (gaming_date, game),
        (gaming_date, shift_no, table_id), (gaming_date, shift_no, dealer_id),
        (gaming_date, shift_no, game)
    )
),

scored as (
    select
        *,
        (house_result_cents - theoretical_win_cents::double) / nullif(sd_cents, 0) as z
    from grouped
)

select
    concat_ws('|', 'hold_vs_theoretical', subject_type, subject_id, gaming_date, shift_no)
        as alert_id,
    'hold_vs_theoretical' as test_name,
    subject_type,
    subject_id,
    gaming_date,
    shift_no,
    positions as sample_size,
    'z' as statistic_name,
    round(z, 6) as statistic,
    null::integer as degrees_of_freedom,
    round(z, 6) as z_score,
    {{ round_sig('2 * ' ~ normal_sf('abs(z)')) }} as p_value,
    '|z| >' as threshold_rule,
    {{ z_95() }} as threshold,
    house_result_cents::double as observed,
    theoretical_win_cents::double as expected,
    round(theoretical_win_cents::double - {{ z_95() }} * sd_cents, 2) as interval_low,
    round(theoretical_win_cents::double + {{ z_95() }} * sd_cents, 2) as interval_high,
    coalesce(abs(z) > {{ z_95() }}, false) as is_alert,
    handle_cents,
    house_result_cents,
    theoretical_win_cents,
    sd_cents,
    house_result_cents / nullif(handle_cents, 0) as hold_pct,
    theoretical_win_cents / nullif(handle_cents, 0) as theoretical_hold_pct,
    (theoretical_win_cents::double - {{ z_95() }} * sd_cents) / nullif(handle_cents, 0)
        as hold_interval_low_pct,
    (theoretical_win_cents::double + {{ z_95() }} * sd_cents) / nullif(handle_cents, 0)
        as hold_interval_high_pct
from scored
