{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='pair_key') }}
{%- set mark = largest_in_this('positions_lake_row_id') if is_incremental() else -1 %}

-- Each dealer x player pair's sums over its valued player positions (fct_positions beside
-- int_position_expectations): what stat_dealer_player_pairs tests. A build adds its new
-- positions to the sums of their pairs instead of summing every position in the lake again.
-- A position's expectation is computed in the build that appends the position, and carries its
-- round's newest position row id, so the positions above this model's watermark
-- (positions_lake_row_id) are exactly those not yet summed, and so are their expectations.
with new_positions as (
    select
        p.dealer_id,
        p.player_ref,
        p.wager_cents,
        p.house_result_cents,
        p.theoretical_win_cents,
        e.expected_house_cents,
        e.expected_variance,
        p.lake_row_id
    from {{ ref('fct_positions') }} as p
    inner join {{ ref('int_position_expectations') }} as e
        on e.round_id = p.round_id and e.seat = p.seat and e.note is null
    where p.bettor = 'player' and p.player_ref is not null and p.wager_cents > 0
        and p.lake_row_id > {{ mark }} and e.lake_row_id > {{ mark }}
),

added as (
    select
        concat_ws('|', dealer_id, player_ref) as pair_key,
        dealer_id,
        player_ref,
        count(*) as positions,
        sum(wager_cents) as handle_cents,
        sum(house_result_cents) as house_result_cents,
        sum(theoretical_win_cents) as theoretical_win_cents,
        {{ exact_sum('expected_house_cents') }} as expected_house_cents,
        {{ exact_sum('expected_variance') }} as expected_variance,
        max(lake_row_id) as positions_lake_row_id
    from new_positions
    group by dealer_id, player_ref
{% if is_incremental() %}
    union all
    select
        pair_key, dealer_id, player_ref, positions, handle_cents, house_result_cents,
        theoretical_win_cents, expected_house_cents, expected_variance, positions_lake_row_id
    from {{ this }}
    where pair_key in (select concat_ws('|', dealer_id, player_ref) from new_positions)
{% endif %}
)

select
    pair_key,
    any_value(dealer_id) as dealer_id,
    any_value(player_ref) as player_ref,
    sum(positions)::bigint as positions,
    sum(handle_cents)::bigint as handle_cents,
    sum(house_result_cents)::bigint as house_result_cents,
    sum(theoretical_win_cents)::decimal(38, 6) as theoretical_win_cents,
    {{ exact_sum('expected_house_cents') }} as expected_house_cents,
    {{ exact_sum('expected_variance') }} as expected_variance,
    max(positions_lake_row_id) as positions_lake_row_id
from added
group by pair_key
