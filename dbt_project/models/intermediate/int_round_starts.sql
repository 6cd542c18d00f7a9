{{ config(materialized='incremental', incremental_strategy='append') }}

-- Every round as it started: dealer, deck and the shuffler that prepared the deck (the device
-- of the table's last shuffle_completed before the round, or manual@<table> for a hand
-- shuffle, PGP-A8a, TCP-A7). Known from the events before the round ends.
with starts as (
    select event_id, round_id, table_id, game, seq, occurred_at, dealer_id, deck_id, lake_row_id
    from {{ new_event_fields() }}
    where event_type = 'round_started'
        and {{ new_lake_rows() }}
),

shuffles as (
    select table_id, seq, coalesce(shuffle_device, 'manual@' || table_id) as shuffler
    from {{ ref('int_table_events') }}
    where event_type = 'shuffle_completed'
)

select
    s.round_id,
    s.event_id,
    s.table_id,
    s.game,
    s.seq,
    s.occurred_at as started_at,
    s.dealer_id,
    s.deck_id,
    sh.shuffler,
    s.lake_row_id
from starts as s
asof left join shuffles as sh on sh.table_id = s.table_id and s.seq > sh.seq
