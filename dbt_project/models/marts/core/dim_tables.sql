-- Every table that opened, with the rule profile, limits and payout cap it last opened under.
select
    table_id,
    arg_max(casino_id, seq) as casino_id,
    arg_max(game, seq) as game,
    arg_max(profile, seq) as profile,
    arg_max(profile_version, seq) as profile_version,
    arg_max(profile, seq) || '@' || arg_max(profile_version, seq) as profile_key,
    arg_max(seats, seq) as seats,
    arg_max(payout_cap_cents, seq) as payout_cap_cents,
    arg_max(commission_unit_cents, seq) as commission_unit_cents,
    arg_max(limits, seq) as limits,
    min(occurred_at) as first_opened_at,
    max(occurred_at) as last_opened_at,
    count(*) as openings
from {{ ref('int_table_events') }}
where event_type = 'table_opened'
group by table_id
