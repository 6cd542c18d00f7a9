select
    round_id,
    casino_id,
    table_id,
    game,
    entry_no,
    seat,
    kind,
    amount_cents,
    meter_before_cents,
    meter_after_cents,
    rule_ids,
    occurred_at,
    rowid as lake_row_id
from {{ source('lake', 'jackpot_ledger') }}
