{{ config(materialized='incremental', incremental_strategy='append') }}

-- The progressive meter as shown at the table: set by the operator (progressive_meter_reset)
-- or displayed at the end of each Hold'em round (progressive_meter_recorded), DEF-THP4.
select
    event_id,
    table_id,
    round_id,
    seq,
    occurred_at,
    case event_type when 'progressive_meter_reset' then 'reset' else 'recorded' end as reading_kind,
    meter_cents,
    reason,
    lake_row_id
from {{ new_event_fields() }}
where event_type in ('progressive_meter_reset', 'progressive_meter_recorded')
    and {{ new_lake_rows() }}
