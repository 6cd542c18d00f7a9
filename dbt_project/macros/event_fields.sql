{% macro event_fields(events) -%}
{#- The payload fields the marts use, parsed with one json_transform per event, of the rows of
    `events` (stg_lake__events' columns). Each typed slice (int_table_events, int_round_starts,
    int_bets_placed, ...) selects its event types and new rows from here, and DuckDB pushes
    those filters below the parse, so every event is parsed once, by the slice it belongs to,
    and only when it is new. A round's event the consumer stored without applying it to the
    round (lake.skipped_events: a replayed round's, one outside its round, a late one) is left
    out, as the settlement left it out. -#}
with parsed as (
    select
        event_id,
        event_type,
        casino_id,
        table_id,
        game,
        round_id,
        seq,
        occurred_at,
        source_device,
        json_transform(payload, '{
            "seat": "INTEGER", "spot": "VARCHAR", "amount_cents": "BIGINT",
            "player_ref": "VARCHAR", "decision": "VARCHAR",
            "dice": ["INTEGER"], "valid": "BOOLEAN",
            "recipient": "VARCHAR", "group": "INTEGER", "cards": ["VARCHAR"],
            "face_up": "BOOLEAN", "deal_order": ["INTEGER"], "street": "VARCHAR",
            "meter_cents": "BIGINT", "reason": "VARCHAR",
            "kind": "VARCHAR", "chips": [{"denomination_cents": "BIGINT", "count": "BIGINT"}],
            "dealer_id": "VARCHAR", "deck_id": "VARCHAR", "method": "VARCHAR",
            "device": "VARCHAR", "count": "INTEGER",
            "profile": "VARCHAR", "profile_version": "INTEGER", "seats": "INTEGER",
            "payout_cap_cents": "BIGINT", "commission_unit_cents": "BIGINT", "limits": "JSON"
        }') as f,
        lake_row_id
    from {{ events }}
    where (event_type in (
            'round_started', 'bet_placed', 'player_decided', 'dice_rolled', 'cards_dealt',
            'community_dealt', 'progressive_meter_recorded')
        or round_id is null)
        and (round_id is null
            or event_id not in (select event_id from {{ skipped_events() }}))
)

select
    event_id,
    event_type,
    casino_id,
    table_id,
    game,
    round_id,
    seq,
    occurred_at,
    source_device,
    f.seat,
    f.spot,
    f.amount_cents,
    f.player_ref,
    f.decision,
    f.dice,
    f.valid as dice_valid,
    f.recipient,
    f."group" as group_no,
    f.cards,
    f.face_up,
    f.deal_order,
    f.street,
    f.meter_cents,
    f.reason,
    f.kind as inventory_kind,
    case when event_type = 'inventory_counted'
        then coalesce(list_sum(list_transform(f.chips, c -> c.denomination_cents * c."count")), 0)
    end::bigint as inventory_cents,
    f.dealer_id,
    f.deck_id,
    f.method as shuffle_method,
    f.device as shuffle_device,
    f."count" as card_count,
    f.profile,
    f.profile_version,
    f.seats,
    f.payout_cap_cents,
    f.commission_unit_cents,
    f.limits,
    lake_row_id
from parsed
{%- endmacro %}

{% macro new_event_fields() -%}
    {#- What an event model reads its new events from. In an incremental run of a build that
        knows the lake snapshot the last whole build read (`croupier build` passes it in
        CROUPIER_LAKE_BUILT_SNAPSHOT when every snapshot since is kept and only added rows:
        infra/marts.py FEED_SAFE_CHANGES), the events inserted
        after it, read with ducklake_table_insertions, which opens only their data files: a
        filter on the row id reads the row id of every event in the lake (~0.2-0.4 s per model
        on 34M events), since DuckLake does not skip files by row id. The last whole build
        read every row up to its snapshot into every model, so the model's watermark
        (new_lake_rows) then only leaves out what a later build of a selection read.
        Otherwise int_event_fields: every event, and the watermark picks the new ones. -#}
    {%- set since = env_var('CROUPIER_LAKE_BUILT_SNAPSHOT', '') if execute else '' -%}
    {%- set pinned = env_var('CROUPIER_LAKE_SNAPSHOT', '') if execute else '' -%}
    {%- if is_incremental() and since and pinned -%}
        ({{ event_fields(lake_rows('events', since | int + 1, pinned | int)) }})
    {%- else -%}
        {{ ref('int_event_fields') }}
    {%- endif -%}
{%- endmacro %}


{% macro skipped_events() -%}
    {#- lake.skipped_events, or no rows in a lake no consumer has opened since the table came
        (the consumer creates it; a build only reads the lake). -#}
    {%- if execute and adapter.get_relation(
            database='lake', schema='main', identifier='skipped_events') is none -%}
        (select null::varchar as event_id where false)
    {%- else -%}
        {{ source('lake', 'skipped_events') }}
    {%- endif -%}
{%- endmacro %}
