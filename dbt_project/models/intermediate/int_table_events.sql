{{ config(materialized='incremental', incremental_strategy='append') }}

-- Table-level events (no round): opening, dealer changes, decks, shuffles, chip tray counts,
-- fills, credits, drops, meter resets, with their fields as columns.
select
    event_id,
    event_type,
    casino_id,
    table_id,
    game,
    seq,
    occurred_at,
    source_device,
    dealer_id,
    deck_id,
    inventory_kind,
    inventory_cents,
    amount_cents,
    meter_cents,
    shuffle_method,
    shuffle_device,
    profile,
    profile_version,
    seats,
    payout_cap_cents,
    commission_unit_cents,
    limits,
    card_count,
    reason,
    lake_row_id
from {{ new_event_fields() }}
where round_id is null
    and {{ new_lake_rows() }}
