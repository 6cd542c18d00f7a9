{{ config(materialized='incremental', incremental_strategy='append') }}

-- Every rule breach the consumer found, with the rule it breaks, its casino day and shift, and
-- whether it counts against the dealer on duty (procedure) or a device (EVT-* stream faults).
select
    v.violation_id,
    v.rule_id,
    v.check_name,
    v.severity,
    v.casino_id,
    v.table_id,
    v.game,
    v.round_id,
    v.dealer_id,
    v.seq,
    v.event_id,
    v.occurred_at,
    {{ gaming_date('v.occurred_at') }} as gaming_date,
    {{ shift_no('v.occurred_at') }} as shift_no,
    r.summary as rule_summary,
    coalesce(r.dealer_accountable, true) as dealer_accountable,
    v.evidence,
    v.lake_row_id
from {{ ref('stg_lake__violations') }} as v
left join {{ ref('rules') }} as r on r.rule_id = v.rule_id
where {{ new_lake_rows('v.lake_row_id') }}
