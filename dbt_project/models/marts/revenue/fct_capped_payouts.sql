-- Every payout the table's cap cut (THP-A2c, DEF-THP5): what the rules gave, what was paid,
-- and what the cap withheld.
select
    bet_id,
    round_id,
    table_id,
    game,
    dealer_id,
    seat,
    spot,
    player_ref,
    wager_cents,
    uncapped_payout_cents,
    payout_cents,
    capped_cents,
    capped_cents / uncapped_payout_cents as capped_share,
    settled_at,
    gaming_date,
    shift_no
from {{ ref('fct_bets') }}
where capped_cents > 0
