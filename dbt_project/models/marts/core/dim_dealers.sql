-- Every dealer who took a table (dealer_changed) or ran a round, where and when.
with seen as (
    select dealer_id, table_id, game, occurred_at as seen_at
    from {{ ref('int_table_events') }}
    where event_type = 'dealer_changed'
    union all
    select dealer_id, table_id, game, started_at
    from {{ ref('fct_rounds') }}
    where dealer_id is not null
)

select
    dealer_id,
    min(seen_at) as first_seen_at,
    max(seen_at) as last_seen_at,
    list(distinct table_id order by table_id) as tables,
    list(distinct game order by game) as games
from seen
group by dealer_id
