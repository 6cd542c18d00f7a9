-- Rule profiles with the house edge of each bet spot (seeds/house_edges.csv, generated from
-- games/odds.py by scripts/house_edges.py). A profile whose best-strategy edge is negative for
-- some spot is flagged (DEF-TCP6: the pe-2005 exposed card). A profile version tables opened
-- under without a row in the seed (a casino's own version before the seed is regenerated, or
-- a version not released here) is listed too, with no house edges: its theoretical win is
-- unknown, never a reason for the build to fail.
with edges as (
    select * from {{ ref('house_edges') }}
),

used as (
    select
        profile,
        profile_version,
        count(distinct table_id) as tables,
        min(game) as game
    from {{ ref('int_table_events') }}
    where event_type = 'table_opened'
    group by profile, profile_version
),

profiles as (
    select profile, profile_version from edges
    union
    select profile, profile_version from used
)

select
    p.profile || '@' || p.profile_version as profile_key,
    p.profile,
    p.profile_version,
    coalesce(
        any_value(u.game), replace(split_part(p.profile, '/', 1), '-', '_')
    ) as game,
    map(
        coalesce(list(e.spot order by e.spot) filter (where e.spot is not null), []),
        coalesce(list(e.house_edge order by e.spot) filter (where e.spot is not null), [])
    ) as house_edge_by_spot,
    max(e.house_edge) filter (where e.spot in ('main', 'ante')) as main_house_edge,
    min(coalesce(e.optimal_house_edge, e.house_edge)) as lowest_optimal_house_edge,
    min(coalesce(e.optimal_house_edge, e.house_edge)) < 0 as has_negative_edge,
    count(e.spot) > 0 as has_house_edges,
    string_agg(distinct e.method, '; ' order by e.method) as methods,
    coalesce(any_value(u.tables), 0) as tables_using
from profiles as p
left join edges as e on e.profile = p.profile and e.profile_version = p.profile_version
left join used as u on u.profile = p.profile and u.profile_version = p.profile_version
group by p.profile, p.profile_version
