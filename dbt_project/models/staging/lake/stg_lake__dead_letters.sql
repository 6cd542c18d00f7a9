select
    source_topic,
    source_partition,
    source_offset,
    message_key,
    raw,
    raw_size as raw_size_bytes,
    reason,
    detail,
    rowid as lake_row_id
from {{ source('lake', 'dead_letters') }}
