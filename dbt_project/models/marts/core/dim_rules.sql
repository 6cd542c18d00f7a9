{{ config(tags=['project_only']) }}

-- Every rule ID a settlement or violation can cite: the regulations (PGP, TCP, THP, ALL), the
-- platform's defaults (DEF) and the event-stream rules (EVT), as restated in
-- shared/spec/regulations.md and defaults.md (seeds/rules.csv).
select
    rule_id,
    source,
    nullif(game, '') as game,
    summary,
    dealer_accountable
from {{ ref('rules') }}
