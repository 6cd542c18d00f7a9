{{ config(materialized='ephemeral') }}

-- The payload fields the marts use (macros/event_fields.sql), of every event in the lake.
{{ event_fields(ref('stg_lake__events')) }}
