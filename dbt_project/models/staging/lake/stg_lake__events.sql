select
    event_id,
    event_type,
    schema_version,
    casino_id,
    table_id,
    game,
    round_id,
    seq,
    occurred_at,
    source_device,
    payload,
    source_partition,
    source_offset,
    rowid as lake_row_id
from {{ source('lake', 'events') }}
