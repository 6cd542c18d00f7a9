select
    violation_id,
    rule_id,
    check_name,
    severity,
    casino_id,
    table_id,
    game,
    round_id,
    dealer_id,
    seq,
    event_id,
    occurred_at,
    cast(evidence as json) as evidence,
    rowid as lake_row_id
from {{ source('lake', 'violations') }}
