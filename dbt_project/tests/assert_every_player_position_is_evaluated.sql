-- The hold and hole-carding tests leave no player position out silently: each has its expected
-- house result, and each play/fold or call/fold decision (a play or call bet, or a folded ante)
-- has its evidence; or the round carries a note saying why it could not be
-- evaluated (bad data the consumer already reported). Guards the rows `croupier evidence`
-- stored in the lake, which incremental builds read as they are (one deleted there, or left
-- of another evaluation version under a current mark, would otherwise just vanish).
select 'expectation' as missing, p.round_id, p.seat, p.game, p.table_id
from {{ ref('fct_positions') }} as p
where p.lake_row_id > {{ tested_up_to('settlements') }}
    and p.bettor = 'player'
    and not exists (
        select 1 from {{ ref('int_position_expectations') }} as e
        where e.round_id = p.round_id and (e.seat = p.seat or e.note is not null))
union all
select 'decision' as missing, b.round_id, b.seat, b.game, b.table_id
from {{ ref('fct_bets') }} as b
where b.lake_row_id > {{ tested_up_to('settlements') }}
    and b.bettor = 'player' and b.outcome <> 'returned'
    and (b.spot in ('play', 'call') or (b.spot = 'ante' and b.outcome = 'fold'))
    and not exists (
        select 1 from {{ ref('int_decision_evidence') }} as e
        where e.round_id = b.round_id and (e.seat = b.seat or e.note is not null))
