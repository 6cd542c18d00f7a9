{{ config(materialized='incremental', incremental_strategy='append') }}

-- One row per round, with its money from the settlements and the time it took at the table.
-- seconds_in_play = the round's own duration + the pause since the table's previous round
-- ended, a pause longer than var('max_round_gap_seconds') counting as a break (not play).
-- A round that never ended has no time in play and does not move the previous end.
-- A round and its settlement lines are committed together, so the lines new since the last
-- build are exactly those of the new rounds.
with new_rounds as (
    select * from {{ ref('stg_lake__rounds') }}
    where {{ new_lake_rows() }}
),

{% if is_incremental() %}
previous_end as (
    select table_id, max(ended_at) as last_ended_at
    from {{ this }}
    group by table_id
),
{% endif %}

lines as (
    select
        round_id,
        count(*) as bet_lines,
        count(*) filter (where wager_cents > 0) as wagers,
        count(distinct player_ref) filter (where bettor = 'player') as players,
        count(distinct seat) as seats,
        sum(wager_cents)::bigint as handle_cents,
        sum(house_result_cents)::bigint as settled_house_result_cents,
        sum(commission_cents)::bigint as commission_cents,
        sum(payout_cents)::bigint as payout_cents,
        sum(capped_cents)::bigint as capped_cents,
        count(*) filter (where capped_cents > 0) as capped_payouts,
        sum(theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents,
        max(lake_row_id) as bets_lake_row_id
    from {{ ref('fct_bets') }}
    where {{ new_lake_rows(mark='bets_lake_row_id') }}
    group by round_id
),

timed as (
    select
        r.*,
        coalesce(
            lag(r.ended_at ignore nulls)
                over (partition by r.table_id order by r.started_at, r.round_id)
            {% if is_incremental() %}, p.last_ended_at{% endif %}
        ) as previous_ended_at
    from new_rounds as r
    {% if is_incremental() %}
    left join previous_end as p on p.table_id = r.table_id
    {% endif %}
)

select
    t.round_id,
    t.casino_id,
    t.table_id,
    t.game,
    t.dealer_id,
    t.deck_id,
    -- the device (or 'manual@<table>') of the last shuffle before the round
    s.shuffler,
    t.banker_position,
    t.profile,
    t.profile_version,
    t.status,
    t.status_reason,
    t.started_at,
    t.ended_at,
    {{ gaming_date('coalesce(t.ended_at, t.started_at)') }} as gaming_date,
    {{ shift_no('coalesce(t.ended_at, t.started_at)') }} as shift_no,
    -- whole milliseconds, as DECIMAL: sums are exact, whatever order they are added in
    ((epoch_ms(t.ended_at) - epoch_ms(t.started_at)) / 1000)::decimal(18, 3) as duration_seconds,
    ((epoch_ms(t.ended_at) - epoch_ms(t.started_at) + coalesce(least(
        greatest(epoch_ms(t.started_at) - epoch_ms(t.previous_ended_at), 0),
        {{ var('max_round_gap_seconds') }} * 1000), 0)) / 1000)::decimal(18, 3)
        as seconds_in_play,
    t.bets as bets_placed,
    t.wager_cents as wagered_cents,
    t.house_result_cents,
    t.violations,
    coalesce(l.bet_lines, 0) as bet_lines,
    coalesce(l.wagers, 0) as wagers,
    coalesce(l.players, 0) as players,
    coalesce(l.seats, 0) as seats,
    coalesce(l.handle_cents, 0)::bigint as handle_cents,
    coalesce(l.settled_house_result_cents, 0)::bigint as settled_house_result_cents,
    coalesce(l.commission_cents, 0)::bigint as commission_cents,
    coalesce(l.payout_cents, 0)::bigint as payout_cents,
    coalesce(l.capped_cents, 0)::bigint as capped_cents,
    coalesce(l.capped_payouts, 0) as capped_payouts,
    coalesce(l.theoretical_win_cents, 0)::decimal(20, 6) as theoretical_win_cents,
    l.bets_lake_row_id,
    t.lake_row_id
from timed as t
left join lines as l on l.round_id = t.round_id
left join {{ ref('int_round_starts') }} as s on s.round_id = t.round_id
