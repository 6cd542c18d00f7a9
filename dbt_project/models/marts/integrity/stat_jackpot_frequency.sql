-- Does the progressive hit as often as the cards say it should (DEF-THP4)? Per table and for
-- the whole casino, per paying hand and for any paying hand: hits among the progressive
-- wagers settled, against the exact 5-card probability from games/holdem/odds.py
-- (seeds/progressive_paytable.csv). Exact two-sided binomial test; alerts by
-- Benjamini-Hochberg within the test (fdr_cutoff). z is shown for reading, the p-value decides.
with wagers as (
    select table_id, profile, profile_version, count(*) as n
    from {{ ref('fct_bets') }}
    where spot = 'progressive' and outcome <> 'returned'
    group by all
),

hits as (
    select table_id, hit_hand, count(*) as k
    from {{ ref('fct_progressive_ledger') }}
    where kind = 'hit'
    group by all
),

hands as (
    select profile, profile_version, hand, probability from {{ ref('progressive_paytable') }}
    union all
    select profile, profile_version, 'any', sum(probability)
    from {{ ref('progressive_paytable') }}
    group by all
),

per_table as (
    select
        w.table_id as subject_id,
        'table' as subject_type,
        h.hand,
        w.n,
        h.probability,
        coalesce(sum(x.k), 0) as k
    from wagers as w
    inner join hands as h on h.profile = w.profile and h.profile_version = w.profile_version
    left join hits as x
        on x.table_id = w.table_id and (x.hit_hand = h.hand or h.hand = 'any')
    group by all
),

tests as (
    select * from per_table
    union all
    select 'all tables', 'casino', hand, sum(n), any_value(probability), sum(k)
    from per_table
    group by hand
),

tested as (
    select
        'jackpot_frequency' as test_name,
        concat_ws('|', 'jackpot_frequency', subject_type, subject_id, hand) as alert_id,
        subject_type,
        subject_id,
        null::date as gaming_date,
        null::integer as shift_no,
        n::bigint as sample_size,
        'hits' as statistic_name,
        k::double as statistic,
        null::integer as degrees_of_freedom,
        round((k - n * probability) / sqrt(n * probability * (1 - probability)), 6) as z_score,
        {{ binomial_two_sided_p('k', 'n', 'probability') }} as p_value,
        k::double as observed,
        round(n * probability, 6) as expected,
        null::double as interval_low,
        null::double as interval_high,
        hand,
        probability
    from tests
),

decided as (
    {{ fdr_cutoff('tested', 'test_name, gaming_date') }}
)

select
    * exclude (p_value, fdr_bound, fdr_cutoff),
    {{ round_sig('p_value') }} as p_value,
    'p <= (BH)' as threshold_rule,
    coalesce(fdr_cutoff, fdr_bound) as threshold,
    coalesce(p_value <= fdr_cutoff, false) as is_alert
from decided
