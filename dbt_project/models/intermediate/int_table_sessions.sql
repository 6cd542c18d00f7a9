-- A table session runs from an opening count of the chip tray to the next opening count at the
-- same table; its fills, credits and drop are those recorded in between (DEF-ACC1). A casino
-- that counts the tray at every shift change gets one session per shift.
with tray_events as (
    select
        *,
        sum(case when event_type = 'inventory_counted' and inventory_kind = 'opening'
            then 1 else 0 end) over (partition by table_id order by lake_row_id) as session_no
    from {{ ref('int_table_events') }}
    where event_type in ('inventory_counted', 'fill_recorded', 'credit_recorded', 'drop_recorded',
        'table_opened', 'table_closed')
)

select
    table_id || '#' || session_no as session_id,
    table_id,
    any_value(game) as game,
    any_value(casino_id) as casino_id,
    session_no,
    min(occurred_at) filter (where inventory_kind = 'opening') as opened_at,
    max(occurred_at) filter (where inventory_kind = 'closing') as counted_closed_at,
    max(occurred_at) filter (where event_type = 'table_closed') as table_closed_at,
    -- the opening count starts the session; the last closing count in it ends the tray's story
    arg_min(inventory_cents, lake_row_id) filter (where inventory_kind = 'opening') as opening_inventory_cents,
    arg_max(inventory_cents, lake_row_id) filter (where inventory_kind = 'closing') as closing_inventory_cents,
    coalesce(sum(amount_cents) filter (where event_type = 'fill_recorded'), 0)::bigint as fills_cents,
    coalesce(sum(amount_cents) filter (where event_type = 'credit_recorded'), 0)::bigint as credits_cents,
    coalesce(sum(amount_cents) filter (where event_type = 'drop_recorded'), 0)::bigint as drop_cents,
    count(*) filter (where event_type = 'fill_recorded') as fills,
    count(*) filter (where event_type = 'credit_recorded') as credits,
    count(*) filter (where event_type = 'drop_recorded') as drops
from tray_events
where session_no > 0
group by table_id, session_no
