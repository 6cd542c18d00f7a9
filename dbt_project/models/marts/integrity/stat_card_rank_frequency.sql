-- Do the cards come out of each deck and each shuffler with the frequencies a fair shuffle
-- gives? Chi-square goodness of fit over the 13 ranks (uniform, 12 degrees of freedom):
--   card_ranks per deck and per shuffler: every card dealt (jokers aside);
--   first_card_rank per shuffler: the rank of the first card dealt in each round, a position
--     a poor shuffle or a stacked deck would bias.
-- Pai Gow deals the whole deck every round, so its decks fit exactly unless a card is missing
-- or doubled. Tested once the smallest expected cell reaches 5; alert by Benjamini-Hochberg within the test (fdr_cutoff).
with counts as (
    select deck_id, shuffler, rank, sum(cards) as cards, sum(first_cards) as first_cards
    from {{ ref('int_card_rank_counts') }}
    where rank <> 'joker'
    group by all
),

samples as (
    select 'card_ranks' as test_name, 'deck' as subject_type, deck_id as subject_id, rank,
        cards as n
    from counts
    union all
    select 'card_ranks', 'shuffler', shuffler, rank, cards
    from counts
    union all
    select 'first_card_rank', 'shuffler', shuffler, rank, first_cards
    from counts
),

subjects as (
    select test_name, subject_type, subject_id, sum(n) as n
    from samples
    group by all
    having sum(n) / 13 >= 5
),

cells as (
    select
        s.test_name,
        s.subject_type,
        s.subject_id,
        s.n,
        k.rank,
        s.n / 13 as expected,
        coalesce(sum(x.n), 0) as observed
    from subjects as s
    cross join unnest(['2', '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'Q', 'K', 'A']) as k(rank)
    left join samples as x
        on x.test_name = s.test_name and x.subject_type = s.subject_type
        and x.subject_id = s.subject_id and x.rank = k.rank
    group by all
),

tests as (
    select
        test_name,
        subject_type,
        subject_id,
        any_value(n)::bigint as n,
        12 as df,
        {{ exact_sum("(observed - expected) ^ 2 / expected") }} as chi_square,
        map(list(rank order by rank), list(observed order by rank)) as observed_by_rank
    from cells
    group by all
),

scored as (
    select *, {{ chi_square_sf('chi_square', 'df') }} as p_value
    from tests
),

tested as (
    select
        concat_ws('|', test_name, subject_type, subject_id) as alert_id,
        test_name,
        subject_type,
        subject_id,
        null::date as gaming_date,
        null::integer as shift_no,
        n as sample_size,
        'chi_square' as statistic_name,
        round(chi_square, 6) as statistic,
        df as degrees_of_freedom,
        null::double as z_score,
        p_value,
        null::double as observed,
        null::double as expected,
        null::double as interval_low,
        null::double as interval_high,
        observed_by_rank
    from scored
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
