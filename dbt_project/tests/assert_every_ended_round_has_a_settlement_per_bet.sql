-- Every round that ended (settled, or voided: its wagers returned) has a settlement line for
-- each wager it took, for the amount wagered: the bets placed (bet_placed) and the play / call
-- made with a decision (player_decided), read from the events, against the settlement lines'
-- wagers.
with tested as (
    -- rounds not yet tested, and rounds with wagers not yet tested (everything on a full
    -- test), as two scans that each read only their own new rows: one join of every wager
    -- and every round under an `or` of the two bounds read them all
    select round_id from {{ ref('stg_lake__rounds') }}
    where status in ('settled', 'voided') and lake_row_id > {{ tested_up_to('rounds') }}
    union
    select round_id from {{ ref('int_bets_placed') }}
    where lake_row_id > {{ tested_up_to('events') }}
),

wagers as (
    select b.round_id, b.seat, b.spot, sum(b.amount_cents) as wagered_cents
    from {{ ref('int_bets_placed') }} as b
    inner join {{ ref('stg_lake__rounds') }} as r on r.round_id = b.round_id
    where r.status in ('settled', 'voided') and b.round_id in (select round_id from tested)
    group by all
),

lines as (
    select round_id, seat, spot, sum(wager_cents) as settled_wager_cents
    from {{ ref('fct_bets') }}
    where bettor = 'player' and round_id in (select round_id from wagers)
    group by all
)

select w.*, l.settled_wager_cents
from wagers as w
left join lines as l on l.round_id = w.round_id and l.seat = w.seat and l.spot = w.spot
where l.settled_wager_cents is distinct from w.wagered_cents
