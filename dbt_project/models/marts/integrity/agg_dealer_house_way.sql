-- House-way compliance per dealer and casino day (PGP-A13c, DEF-PGP1): of the Pai Gow rounds
-- the dealer set a hand in (every settled round), the share without a house-way violation.
with rounds as (
    select gaming_date, dealer_id, count(*) as hands_set
    from {{ ref('fct_rounds') }}
    where game = 'pai_gow' and status = 'settled'
    group by gaming_date, dealer_id
),

breaches as (
    select gaming_date, dealer_id, count(distinct round_id) as house_way_violations
    from {{ ref('fct_violations') }}
    where rule_id = 'PGP-A13c'
    group by gaming_date, dealer_id
)

select
    concat_ws('|', r.gaming_date, r.dealer_id) as dealer_day_id,
    r.gaming_date,
    r.dealer_id,
    r.hands_set,
    coalesce(b.house_way_violations, 0) as house_way_violations,
    1 - coalesce(b.house_way_violations, 0) / r.hands_set as house_way_compliance
from rounds as r
left join breaches as b on b.gaming_date = r.gaming_date and b.dealer_id = r.dealer_id
