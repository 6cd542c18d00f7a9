{{ config(materialized='incremental', incremental_strategy='append') }}

-- Every play/fold (Tripóker) and call/fold (Hold'em) decision a player made, beside the
-- legitimate-optimal and the full-information choice (int_decision_evidence), with who made it,
-- where and under which dealer: the hole-carding test's input and the Players page's evidence.
-- Incremental: the evidence rows above the watermark (each carries its round's lake_row_id).
select
    e.round_id,
    e.seat,
    p.player_ref,
    p.dealer_id,
    p.table_id,
    p.game,
    p.gaming_date,
    p.settled_at,
    e.played,
    e.legitimate,
    e.full_information,
    e.informative,
    e.played = e.full_information as took_full_information,
    e.gain_cents,
    e.match_probability,
    e.lake_row_id
from {{ ref('int_decision_evidence') }} as e
inner join {{ ref('fct_positions') }} as p
    on p.round_id = e.round_id and p.seat = e.seat and p.bettor = 'player'
where e.note is null and {{ new_lake_rows('e.lake_row_id') }}
