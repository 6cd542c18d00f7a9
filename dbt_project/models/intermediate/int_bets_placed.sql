{{ config(materialized='incremental', incremental_strategy='append') }}

-- Every wager a round took: bet_placed (main, ante, pair plus, progressive) and the play or
-- call made with a player's decision (Tripóker play, Hold'em call; amount 0 for fold and
-- surrender is no wager; a Pai Gow decision wagers nothing, an amount on one is a violation).
-- The invariants check each has its settlement line.
select
    event_id,
    round_id,
    table_id,
    game,
    seq,
    occurred_at,
    seat,
    case
        when event_type = 'bet_placed' then spot
        when game = 'tripoker' then 'play'
        else 'call'
    end as spot,
    amount_cents,
    player_ref,
    lake_row_id
from {{ new_event_fields() }}
where (
        event_type = 'bet_placed'
        or (event_type = 'player_decided' and amount_cents > 0 and game in ('tripoker', 'holdem'))
    )
    and {{ new_lake_rows() }}
