{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='gaming_date') }}

-- Payout accuracy per dealer and casino day: of the lines the dealer recorded paying or
-- collecting, the share equal to what the rules computed; money over- and underpaid; and the
-- Pai Gow commission the rules required (PGP-A17c, DEF-M2) but the dealer did not take.
with recorded as (
    select
        *,
        coalesce(recorded_paid_cents, 0) - payout_cents as paid_difference_cents,
        commission_cents - coalesce(recorded_commission_cents, 0) as commission_short_cents
    from {{ ref('fct_bets') }}
    where recorded_paid_cents is not null and bettor <> 'house'
        and {{ affected_days('fct_bets') }}
)

select
    concat_ws('|', gaming_date, dealer_id) as dealer_day_id,
    gaming_date,
    dealer_id,
    count(*) as recorded_lines,
    count(*) filter (where payout_difference_cents = 0) as accurate_lines,
    count(*) filter (where payout_difference_cents = 0) / count(*) as payout_accuracy,
    count(*) filter (where paid_difference_cents > 0) as overpaid_lines,
    coalesce(sum(paid_difference_cents) filter (where paid_difference_cents > 0), 0)::bigint
        as overpaid_cents,
    count(*) filter (where paid_difference_cents < 0) as underpaid_lines,
    coalesce(sum(-paid_difference_cents) filter (where paid_difference_cents < 0), 0)::bigint
        as underpaid_cents,
    sum(commission_cents)::bigint as commission_due_cents,
    sum(coalesce(recorded_commission_cents, 0))::bigint as commission_taken_cents,
    count(*) filter (where commission_short_cents > 0) as commission_short_lines,
    coalesce(sum(commission_short_cents) filter (where commission_short_cents > 0), 0)::bigint
        as commission_shortfall_cents,
    (select max(lake_row_id) from {{ ref('fct_bets') }}) as source_lake_row_id
from recorded
group by gaming_date, dealer_id
