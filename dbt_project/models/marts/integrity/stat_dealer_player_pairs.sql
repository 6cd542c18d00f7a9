-- Dealer x player pairs whose results are improbably good for the player: for each pair with
-- at least var('min_pair_positions') positions, z = (house result - expected) / sd, the expected
-- house result and its variance per position GIVEN the player's cards and decisions
-- (int_position_expectations, as stat_hold_vs_theoretical): a pair plus hit or a jackpot the
-- player's own cards made is no longer luck the test must absorb, so the normal tail holds on
-- small samples. One-sided p = P(Z <= z); alerts by Benjamini-Hochberg over every pair tested.
-- The pairs' sums are kept incrementally (int_dealer_player_sums).
with pairs as (
    select
        dealer_id,
        player_ref,
        positions,
        handle_cents,
        house_result_cents,
        theoretical_win_cents::double as theoretical_win_cents,
        expected_house_cents,
        sqrt(expected_variance) as sd_cents
    from {{ ref('int_dealer_player_sums') }}
    where positions >= {{ var('min_pair_positions') }}
),

scored as (
    select
        *,
        (house_result_cents - expected_house_cents) / nullif(sd_cents, 0) as z,
        {{ round_sig(normal_sf('(expected_house_cents - house_result_cents) / nullif(sd_cents, 0)')) }}
            as p_value,
        'dealer_player_pair' as test_name
    from pairs
),

decided as (
    {{ fdr_cutoff('scored', 'test_name') }}
)

select
    concat_ws('|', test_name, dealer_id, player_ref) as alert_id,
    test_name,
    'dealer_player' as subject_type,
    dealer_id || ' x ' || player_ref as subject_id,
    null::date as gaming_date,
    null::integer as shift_no,
    positions as sample_size,
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
    dealer_id,
    player_ref,
    handle_cents,
    house_result_cents,
    round(expected_house_cents, 2) as expected_house_cents,
    round(theoretical_win_cents, 2) as theoretical_win_cents,
    sd_cents
from decided
