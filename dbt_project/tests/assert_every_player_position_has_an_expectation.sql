-- The hold test leaves no player position out silently: each has its expected house result,
-- or its round carries a note saying why it could not be evaluated (bad data the consumer
-- already reported). Guards the rows `croupier evidence` stored in the lake, which incremental
-- builds read as they are (one deleted there would otherwise just vanish from the test).
select p.round_id, p.seat, p.game, p.table_id
from {{ ref('fct_positions') }} as p
where p.lake_row_id > {{ tested_up_to('settlements') }}
    and p.bettor = 'player'
    and not exists (
        select 1 from {{ ref('int_position_expectations') }} as e
        where e.round_id = p.round_id and (e.seat = p.seat or e.note is not null))
