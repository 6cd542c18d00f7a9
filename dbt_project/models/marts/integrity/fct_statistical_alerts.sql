-- Every statistical test that failed, one row each, in one shape: what was tested (test_name,
-- subject), the statistic, its p-value or z, and the threshold it crossed. The stat_* models
-- hold every test run, passed or not.
{% set tests = ['stat_hold_vs_theoretical', 'stat_dice_fit', 'stat_card_rank_frequency',
                'stat_jackpot_frequency', 'stat_dealer_player_pairs',
                'stat_player_decisions'] %}
{% for t in tests %}
select
    alert_id, test_name, subject_type, subject_id, gaming_date, shift_no, sample_size,
    statistic_name, statistic, degrees_of_freedom, z_score, p_value, threshold_rule, threshold,
    observed, expected, interval_low, interval_high
from {{ ref(t) }}
where is_alert
{% if not loop.last %}union all{% endif %}
{% endfor %}
