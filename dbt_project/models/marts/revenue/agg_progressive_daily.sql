-- The progressive per casino day and table: contributions, hits (count, amount, by kind of
-- pay) and the liability (the meter) at the day's last movement and at its highest.
select
    concat_ws('|', gaming_date, table_id) as progressive_day_id,
    gaming_date,
    table_id,
    count(*) filter (where kind = 'contribution') as contributions,
    coalesce(sum(amount_cents) filter (where kind = 'contribution'), 0)::bigint
        as contributions_cents,
    count(*) filter (where kind = 'hit') as hits,
    coalesce(sum(amount_cents) filter (where kind = 'hit'), 0)::bigint as hits_cents,
    count(*) filter (where kind = 'hit' and meter_change_cents < 0) as meter_hits,
    coalesce(sum(-meter_change_cents) filter (where kind = 'hit'), 0)::bigint
        as paid_from_meter_cents,
    count(*) filter (where kind = 'reset') as resets,
    arg_min(meter_before_cents, (occurred_at, round_id, entry_no)) as opening_meter_cents,
    arg_max(meter_after_cents, (occurred_at, round_id, entry_no)) as closing_meter_cents,
    max(meter_after_cents) as highest_meter_cents
from {{ ref('fct_progressive_ledger') }}
group by gaming_date, table_id
