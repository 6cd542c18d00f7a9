select
    source_topic,
    source_partition,
    next_offset,
    rowid as lake_row_id
from {{ source('lake', 'consumer_offsets') }}
