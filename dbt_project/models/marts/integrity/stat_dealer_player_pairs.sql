-- Dealer x player pairs whose results are improbably good for the player: for each pair with
-- at least var('min_pair_positions') positions, z = (house result - theoretical) / sd with the
-- variance of stat_hold_vs_theoretical; one-sided p = P(Z <= z). Many pairs are tested, so
-- the threshold is alert_p_value / pairs tested (Bonferroni).
with positions as (
    select p.*, d.result_variance_per_unit
    from {{ ref('fct_positions') }} as p
    inner join {{ ref('stat_profile_dispersion') }} as d
        on d.profile = p.profile and d.profile_version = p.profile_version
        and d.spot_mix = p.spot_mix
    where p.bettor = 'player' and p.player_ref is not null and p.wager_cents > 0
),

pairs as (
    select
        dealer_id,
        player_ref,
        count(*) as positions,
        sum(wager_cents)::bigint as handle_cents,
        sum(house_result_cents)::bigint as house_result_cents,
        sum(theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents,
        sqrt(sum(wager_cents::double * wager_cents * result_variance_per_unit)) as sd_cents
    from positions
    group by dealer_id, player_ref
    having count(*) >= {{ var('min_pair_positions') }}
),

scored as (
    select
        *,
        (house_result_cents - theoretical_win_cents::double) / nullif(sd_cents, 0) as z,
        {{ var('alert_p_value') }} / count(*) over () as threshold
    from pairs
)

select
    concat_ws('|', 'dealer_player_pair', dealer_id, player_ref) as alert_id,
    'dealer_player_pair' as test_name,
    'dealer_player' as subject_type,
    dealer_id || ' x ' || player_ref as subject_id,
    null::date as gaming_date,
    null::integer as shift_no,
    positions as sample_size,
    'z' as statistic_name,
    round(z, 6) as statistic,
    null::integer as degrees_of_freedom,
    round(z, 6) as z_score,
    {{ round_sig(normal_sf('-z')) }} as p_value,
    'p <' as threshold_rule,
    threshold,
    house_result_cents::double as observed,
    theoretical_win_cents::double as expected,
    round(theoretical_win_cents::double - {{ z_95() }} * sd_cents, 2) as interval_low,
    round(theoretical_win_cents::double + {{ z_95() }} * sd_cents, 2) as interval_high,
    coalesce({{ normal_sf('-z') }} < threshold, false) as is_alert,
    dealer_id,
    player_ref,
    handle_cents,
    house_result_cents,
    theoretical_win_cents,
    sd_cents
from scored
