{{ config(materialized='incremental', incremental_strategy='append') }}

-- Every movement of a table's progressive meter (DEF-THP4), in order: contributions (20 % of
-- each progressive wager), hits and resets, with the meter (the liability) after each. A hit is
-- named by the paytable line its amount matches: a fixed pay, or the meter's share.
with ledger as (
    select * from {{ ref('stg_lake__jackpot_ledger') }}
    where {{ new_lake_rows() }}
),

paytable as (
    select * from {{ ref('progressive_paytable') }}
)

select
    concat_ws('|', l.table_id, l.round_id, l.entry_no) as ledger_entry_id,
    l.round_id,
    l.casino_id,
    l.table_id,
    l.game,
    l.entry_no,
    l.seat,
    l.kind,
    l.amount_cents,
    l.meter_before_cents,
    l.meter_after_cents,
    l.meter_after_cents - l.meter_before_cents as meter_change_cents,
    r.profile,
    r.profile_version,
    (select p.hand from paytable as p
        where l.kind = 'hit'
            and p.profile = r.profile and p.profile_version = r.profile_version
            and (p.fixed_pay_cents = l.amount_cents
                or p.meter_share_bp * l.meter_before_cents // 10000 = l.amount_cents)
        order by p.fixed_pay_cents is null, p.probability
        limit 1) as hit_hand,
    l.rule_ids,
    l.occurred_at,
    {{ gaming_date('l.occurred_at') }} as gaming_date,
    {{ shift_no('l.occurred_at') }} as shift_no,
    l.lake_row_id
from ledger as l
left join {{ ref('stg_lake__rounds') }} as r on r.round_id = l.round_id
