{{ config(materialized='incremental', incremental_strategy='append') }}

-- Every round as it started: dealer, deck and the shuffler that prepared the deck (the device
-- of the table's last shuffle_completed before the round, or manual@<table> for a hand
-- shuffle, PGP-A8a, TCP-A7). Known from the events before the round ends. "Before" as the lake
-- received them: a device that restarts its numbering sends seq 1 again.
with starts as (
    select event_id, round_id, table_id, game, seq, occurred_at, dealer_id, deck_id, lake_row_id
    from {{ new_event_fields() }}
    where event_type = 'round_started'
        and {{ new_lake_rows() }}
),

shuffles_all as (
    select table_id, lake_row_id, coalesce(shuffle_device, 'manual@' || table_id) as shuffler
    from {{ ref('int_table_events') }}
    where event_type = 'shuffle_completed'
),

-- per table with new rounds, its last shuffle before the first of them: the shuffles from it
-- on are all the join below can pick (sorting every shuffle of the lake for it cost 0.3 s)
since as (
    select sh.table_id, max(sh.lake_row_id) filter (where sh.lake_row_id < f.lake_row_id)
        as lake_row_id
    from (select table_id, min(lake_row_id) as lake_row_id from starts group by all) as f
    inner join shuffles_all as sh on sh.table_id = f.table_id
    group by all
),

shuffles as (
    select sh.*
    from shuffles_all as sh inner join since as b on b.table_id = sh.table_id
    where sh.lake_row_id >= coalesce(b.lake_row_id, sh.lake_row_id)
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
asof left join shuffles as sh on sh.table_id = s.table_id and s.lake_row_id > sh.lake_row_id
