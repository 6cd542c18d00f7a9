-- Every table that opened, with the rule profile, limits and payout cap it last opened under
-- (last as the lake received its events: seq starts again when a device restarts).
select
    table_id,
    arg_max(casino_id, lake_row_id) as casino_id,
    arg_max(game, lake_row_id) as game,
    arg_max(profile, lake_row_id) as profile,
    arg_max(profile_version, lake_row_id) as profile_version,
    arg_max(profile, lake_row_id) || '@' || arg_max(profile_version, lake_row_id) as profile_key,
    arg_max(seats, lake_row_id) as seats,
    arg_max(payout_cap_cents, lake_row_id) as payout_cap_cents,
    arg_max(commission_unit_cents, lake_row_id) as commission_unit_cents,
    arg_max(limits, lake_row_id) as limits,
    min(occurred_at) as first_opened_at,
    max(occurred_at) as last_opened_at,
    count(*) as openings
from {{ ref('int_table_events') }}
where event_type = 'table_opened'
group by table_id
