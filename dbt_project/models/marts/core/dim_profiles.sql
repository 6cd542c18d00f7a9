-- Rule profiles with the house edge of each bet spot (seeds/house_edges.csv, generated from
-- games/odds.py by scripts/house_edges.py). A profile whose best-strategy edge is negative for
-- some spot is flagged (DEF-TCP6: the pe-2005 exposed card).
with edges as (
    select * from {{ ref('house_edges') }}
),

used as (
    select profile, profile_version, count(distinct table_id) as tables
    from {{ ref('int_table_events') }}
    where event_type = 'table_opened'
    group by profile, profile_version
)

select
    e.profile || '@' || e.profile_version as profile_key,
    e.profile,
    e.profile_version,
    replace(split_part(e.profile, '/', 1), '-', '_') as game,
    map(list(e.spot order by e.spot), list(e.house_edge order by e.spot)) as house_edge_by_spot,
    max(e.house_edge) filter (where e.spot in ('main', 'ante')) as main_house_edge,
    min(coalesce(e.optimal_house_edge, e.house_edge)) as lowest_optimal_house_edge,
    min(coalesce(e.optimal_house_edge, e.house_edge)) < 0 as has_negative_edge,
    string_agg(distinct e.method, '; ') as methods,
    coalesce(any_value(u.tables), 0) as tables_using
from edges as e
left join used as u on u.profile = e.profile and u.profile_version = e.profile_version
group by e.profile, e.profile_version
