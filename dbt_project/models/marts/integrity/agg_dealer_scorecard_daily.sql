-- One line per dealer and casino day: pace (rounds per hour in play), error rate (violations
-- the dealer is accountable for, per round), payout accuracy, voided rounds and, for Pai Gow,
-- house-way compliance. Counts sit beside each rate so periods can be rolled up.
with rounds as (
    select
        gaming_date,
        dealer_id,
        count(*) as rounds,
        count(*) filter (where status = 'voided') as voided_rounds,
        sum(seconds_in_play) as seconds_in_play,
        sum(handle_cents)::bigint as handle_cents,
        sum(settled_house_result_cents)::bigint as house_result_cents
    from {{ ref('fct_rounds') }}
    where dealer_id is not null
    group by gaming_date, dealer_id
),

errors as (
    select gaming_date, dealer_id, count(*) as dealer_violations,
        count(*) filter (where severity = 'critical') as critical_violations
    from {{ ref('fct_violations') }}
    where dealer_accountable and dealer_id is not null
    group by gaming_date, dealer_id
)

select
    concat_ws('|', r.gaming_date, r.dealer_id) as dealer_day_id,
    r.gaming_date,
    r.dealer_id,
    r.rounds,
    r.seconds_in_play / 3600.0 as hours_in_play,
    r.rounds / nullif(r.seconds_in_play / 3600.0, 0) as rounds_per_hour,
    coalesce(e.dealer_violations, 0) as dealer_violations,
    coalesce(e.critical_violations, 0) as critical_violations,
    coalesce(e.dealer_violations, 0) / r.rounds as error_rate,
    coalesce(p.recorded_lines, 0) as recorded_lines,
    coalesce(p.accurate_lines, 0) as accurate_lines,
    p.payout_accuracy,
    coalesce(p.overpaid_cents, 0) as overpaid_cents,
    coalesce(p.underpaid_cents, 0) as underpaid_cents,
    coalesce(p.commission_shortfall_cents, 0) as commission_shortfall_cents,
    r.voided_rounds,
    r.voided_rounds / r.rounds as void_rate,
    h.hands_set as pai_gow_hands_set,
    h.house_way_compliance,
    r.handle_cents,
    r.house_result_cents
from rounds as r
left join errors as e on e.gaming_date = r.gaming_date and e.dealer_id = r.dealer_id
left join {{ ref('agg_dealer_payouts') }} as p
    on p.gaming_date = r.gaming_date and p.dealer_id = r.dealer_id
left join {{ ref('agg_dealer_house_way') }} as h
    on h.gaming_date = r.gaming_date and h.dealer_id = r.dealer_id
