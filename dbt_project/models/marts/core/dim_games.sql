{{ config(tags=['project_only']) }}

-- The three games, their regulation and default rule profile (seeds/games.csv).
select
    game,
    game_name,
    regulation,
    regulation_published_on,
    default_profile,
    positions,
    rule_prefix
from {{ ref('games') }}
