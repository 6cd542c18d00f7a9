{{ config(materialized='incremental', incremental_strategy='append') }}

-- Every roll of the three Pai Gow dice (PGP-A11). The position the roll chooses, counted from
-- the banker (0 = the banker), is (total - 1) mod 7 (PGP-A11b, 7 positions).
select
    event_id,
    round_id,
    table_id,
    seq,
    occurred_at,
    dice[1] as die_1,
    dice[2] as die_2,
    dice[3] as die_3,
    dice[1] + dice[2] + dice[3] as dice_total,
    (dice[1] + dice[2] + dice[3] - 1) % 7 as position_from_banker,
    dice_valid as is_valid,
    lake_row_id
from {{ new_event_fields() }}
where event_type = 'dice_rolled'
    and {{ new_lake_rows() }}
