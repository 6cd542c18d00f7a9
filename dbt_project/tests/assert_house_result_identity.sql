-- House result = wagers lost - winnings paid + commission = - Σ net to players (platform.md,
-- "Metrics"). Checked per round: the house's result always equals minus what the bettors
-- other than the house netted; where the house banks (DEF-PGP2) it also equals the players'
-- lost wagers - the winnings paid + the commission taken. And per casino day in agg_revenue.
with rounds as (
    select
        round_id,
        bool_and(house_banked) as house_banked,
        sum(house_result_cents) as house_result_cents,
        sum(net_cents) filter (where bettor <> 'house') as bettors_net_cents,
        sum(lost_wager_cents) as lost_wager_cents,
        sum(payout_cents) as payout_cents,
        sum(commission_cents) as commission_cents
    from {{ ref('fct_bets') }}
    -- a round's lines are committed together: rounds not yet tested have only new lines
    where lake_row_id > {{ tested_up_to('settlements') }}
    group by round_id
)

select *
from rounds
where house_result_cents <> -coalesce(bettors_net_cents, 0)
    or (house_banked
        and house_result_cents <> lost_wager_cents - payout_cents + commission_cents)
