{{ config(materialized='incremental', incremental_strategy='append') }}

-- One row per position in a round (a seat's lines for one bettor): the unit whose result is
-- random. A seat's spots are settled on the same cards, so the hold tests treat the position,
-- not the line, as one independent draw. A round's lines are committed together, so the
-- watermark never splits a position.
select
    round_id,
    seat,
    bettor,
    any_value(table_id) as table_id,
    any_value(game) as game,
    any_value(dealer_id) as dealer_id,
    any_value(player_ref) as player_ref,
    any_value(profile) as profile,
    any_value(profile_version) as profile_version,
    any_value(gaming_date) as gaming_date,
    any_value(shift_no) as shift_no,
    any_value(settled_at) as settled_at,
    -- the wagers the position chose before any card was seen: the class its variance is
    -- estimated in (play, call and ante bonus lines depend on the cards, so they are left out)
    concat_ws('+',
        case when bool_or(spot = 'ante') then 'ante' end,
        case when bool_or(spot = 'main') then 'main' end,
        case when bool_or(spot = 'pair_plus') then 'pair_plus' end,
        case when bool_or(spot = 'progressive') then 'progressive' end) as spot_mix,
    count(*) as lines,
    sum(wager_cents)::bigint as wager_cents,
    sum(house_result_cents)::bigint as house_result_cents,
    sum(theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents,
    max(lake_row_id) as lake_row_id
from {{ ref('fct_bets') }}
where bettor <> 'house'
    and {{ new_lake_rows() }}
group by round_id, seat, bettor
