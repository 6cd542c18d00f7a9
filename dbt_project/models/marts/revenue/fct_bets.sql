{{ config(materialized='incremental', incremental_strategy='append') }}

-- One row per settled bet line, with its casino day and shift and its theoretical win
-- (DEF-ACC2: wager x the profile's house edge for that spot). Theoretical win is an expected
-- value, not money moved, so it keeps fractions of a céntimo: DECIMAL rounded to 1e-6 céntimo
-- per line, so sums are exact decimal sums (never float sums).
with settlements as (
    select * from {{ ref('stg_lake__settlements') }}
    where {{ new_lake_rows() }}
),

rounds as (
    select round_id, banker_position from {{ ref('stg_lake__rounds') }}
),

edges as (
    select profile, profile_version, spot, house_edge from {{ ref('house_edges') }}
),

-- a round's lines share their settled_at: convert each instant to casino time once
times as (
    select
        settled_at,
        {{ gaming_date('settled_at') }} as gaming_date,
        {{ shift_no('settled_at') }} as shift_no
    from (select distinct settled_at from settlements)
)

select
    concat_ws('|', s.round_id, s.seat, s.spot, s.bettor) as bet_id,
    s.round_id,
    s.casino_id,
    s.table_id,
    s.game,
    s.dealer_id,
    s.seat,
    s.spot,
    s.bettor,
    s.player_ref,
    -- the house banks unless a player holds the bank (DEF-PGP2); null position = the dealer
    coalesce(r.banker_position, 0) = 0 as house_banked,
    s.wager_cents,
    s.outcome,
    case when s.outcome in ('lose', 'fold', 'surrender', 'foul') then s.wager_cents else 0 end
        as lost_wager_cents,
    s.payout_cents,
    s.capped_cents,
    s.uncapped_payout_cents,
    s.commission_cents,
    s.net_cents,
    s.house_result_cents,
    s.recorded_paid_cents,
    s.recorded_commission_cents,
    s.payout_difference_cents,
    s.profile,
    s.profile_version,
    s.rule_ids,
    e.house_edge,
    cast(s.wager_cents * e.house_edge as decimal(20, 6)) as theoretical_win_cents,
    s.settled_at,
    t.gaming_date,
    t.shift_no,
    s.lake_row_id
from settlements as s
left join rounds as r on r.round_id = s.round_id
left join edges as e
    on e.profile = s.profile and e.profile_version = s.profile_version and e.spot = s.spot
left join times as t on t.settled_at = s.settled_at
