-- No settlement without a round: every settlement line belongs to a round the consumer closed,
-- at the same table and game; a settled round's lines are decided, a voided round's lines are
-- all returned with no money moving (PGP-A10e, ALL-5); an unsettled round has no lines.
select s.round_id, s.seat, s.spot, s.bettor, s.outcome, r.status, s.table_id,
    r.table_id as round_table_id
from {{ ref('stg_lake__settlements') }} as s
left join {{ ref('stg_lake__rounds') }} as r on r.round_id = s.round_id
where s.lake_row_id > {{ tested_up_to('settlements') }}
    and (r.round_id is null
    or r.table_id <> s.table_id
    or r.game <> s.game
    or r.status = 'unsettled'
    or (r.status = 'voided'
        and (s.outcome <> 'returned' or s.house_result_cents <> 0 or s.net_cents <> 0)))
