{{ config(materialized='incremental', incremental_strategy='append') }}

-- Cards taken from the decks (cards_dealt: seats, dealer, groups, burns, discards;
-- community_dealt: the Hold'em board) counted by deck, shuffler and rank; dealer_revealed
-- shows cards already dealt and is left out. Each build appends the counts of the events new
-- in the lake, so a (deck, shuffler, rank) can have one row per build: sum them. Keeping
-- counts, not one row per card, keeps this small (a round deals up to 53 cards).
with dealt as (
    select
        round_id,
        unnest(cards) as card,
        unnest(coalesce(deal_order, list_transform(cards, c -> null::integer))) as deal_order,
        lake_row_id
    from {{ new_event_fields() }}
    where event_type in ('cards_dealt', 'community_dealt')
        and {{ new_lake_rows() }}
)

select
    r.deck_id,
    r.shuffler,
    case when d.card = 'Jk' then 'joker' else d.card[1] end as rank,
    count(*) as cards,
    count(*) filter (where d.deal_order = 1) as first_cards,
    max(d.lake_row_id) as lake_row_id
from dealt as d
inner join {{ ref('int_round_starts') }} as r on r.round_id = d.round_id
group by all
