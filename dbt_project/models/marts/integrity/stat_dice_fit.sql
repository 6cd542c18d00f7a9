-- Are a Pai Gow table's dice fair? Two chi-square goodness-of-fit tests per table over all its
-- valid rolls (PGP-A11b, PGP-A11c):
--   dice_positions: the 7 positions the rolls chose, expected 31/216 for six and 30/216 for one
--                   (int_dice_position_odds), 6 degrees of freedom: what decides who gets group 1;
--   dice_faces:     the 6 faces of every die rolled, expected 1/6 each, 5 degrees of freedom:
--                   sharper against a loaded die.
-- Alerts by Benjamini-Hochberg within the test (fdr_cutoff).
with rolls as (
    select * from {{ ref('int_dice_rolls') }} where is_valid
),

tables as (
    select table_id, count(*) as rolls from rolls group by table_id
),

position_cells as (
    select
        t.table_id,
        t.rolls as n,
        o.position_from_banker as cell,
        t.rolls * o.probability as expected,
        count(r.event_id) as observed
    from tables as t
    cross join {{ ref('int_dice_position_odds') }} as o
    left join rolls as r
        on r.table_id = t.table_id and r.position_from_banker = o.position_from_banker
    group by all
),

face_cells as (
    select
        t.table_id,
        3 * t.rolls as n,
        f.face as cell,
        3 * t.rolls / 6 as expected,
        coalesce(sum((r.die_1 = f.face)::int + (r.die_2 = f.face)::int + (r.die_3 = f.face)::int), 0)
            as observed
    from tables as t
    cross join range(1, 7) as f(face)
    left join rolls as r on r.table_id = t.table_id
    group by all
),

tests as (
    select 'dice_positions' as test_name, table_id, any_value(n) as n, 6 as df,
        {{ exact_sum("(observed - expected) ^ 2 / expected") }} as chi_square,
        map(list(cell order by cell), list(observed order by cell)) as observed_by_cell,
        map(list(cell order by cell), list(expected order by cell)) as expected_by_cell
    from position_cells
    group by table_id
    union all
    select 'dice_faces', table_id, any_value(n), 5,
        {{ exact_sum("(observed - expected) ^ 2 / expected") }},
        map(list(cell order by cell), list(observed order by cell)),
        map(list(cell order by cell), list(expected order by cell))
    from face_cells
    group by table_id
),

scored as (
    select *, {{ chi_square_sf('chi_square', 'df') }} as p_value
    from tests
),

tested as (
    select
        concat_ws('|', test_name, table_id) as alert_id,
        test_name,
        'table' as subject_type,
        table_id as subject_id,
        null::date as gaming_date,
        null::integer as shift_no,
        n as sample_size,
        'chi_square' as statistic_name,
        round(chi_square, 6) as statistic,
        df as degrees_of_freedom,
        null::double as z_score,
        p_value,
        null::double as observed,
        null::double as expected,
        null::double as interval_low,
        null::double as interval_high,
        observed_by_cell,
        expected_by_cell
    from scored
),

decided as (
    {{ fdr_cutoff('tested', 'test_name, gaming_date') }}
)

select
    * exclude (p_value, fdr_bound, fdr_cutoff),
    {{ round_sig('p_value') }} as p_value,
    'p <= (BH)' as threshold_rule,
    coalesce(fdr_cutoff, fdr_bound) as threshold,
    coalesce(p_value <= fdr_cutoff, false) as is_alert
from decided
