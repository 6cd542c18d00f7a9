-- Players who decide as if they saw the dealer's hidden cards (hole-carding, a flashing dealer,
-- a partner at the table), per player and game and per dealer x player pair. Only decisions
-- whose full-information choice is uncertain from what the player may see carry evidence; on
-- each, a player who cannot see the hidden cards takes the full-information choice with a known
-- probability (int_decision_evidence.match_probability), however they decide, so the count of
-- such matches has an exact Poisson-binomial law (agg_player_decisions). One-sided p =
-- P(matches >= observed); alerts by Benjamini-Hochberg within each of the two tests at
-- var alert_false_discovery_rate, over every player (pair) tested.
with tested as (
    select
        case subject_type
            when 'player' then 'player_decisions' else 'dealer_player_decisions'
        end as test_name,
        *
    from {{ ref('agg_player_decisions') }}
    where tested_decisions > 0
),

decided as (
    {{ fdr_cutoff('tested', 'test_name') }}
)

select
    concat_ws('|', test_name, game, dealer_id, player_ref) as alert_id,
    test_name,
    subject_type,
    case when dealer_id is null then player_ref else dealer_id || ' x ' || player_ref end
        as subject_id,
    null::date as gaming_date,
    null::integer as shift_no,
    tested_decisions as sample_size,
    'matches' as statistic_name,
    matches::double as statistic,
    null::integer as degrees_of_freedom,
    round((matches - expected_matches) / nullif(match_sd, 0), 6) as z_score,
    {{ round_sig('p_value') }} as p_value,
    'p <= (BH)' as threshold_rule,
    coalesce(fdr_cutoff, fdr_bound) as threshold,
    matches::double as observed,
    round(expected_matches, 6) as expected,
    null::double as interval_low,
    null::double as interval_high,
    coalesce(p_value <= fdr_cutoff, false) as is_alert,
    game,
    player_ref,
    dealer_id,
    decisions,
    informative_decisions,
    informative_taken,
    informative_taken / nullif(informative_decisions, 0) as informative_taken_rate,
    legitimate_agreements / nullif(decisions, 0) as legitimate_agreement_rate,
    case
        when decisions < {{ var('min_player_decisions') }} then 'too few decisions'
        when legitimate_agreements >= 0.97 * decisions then 'plays the legitimate optimum'
        else 'typical'
    end as play_class,
    round(gain_cents, 2) as gain_cents,
    first_day,
    last_day
from decided
