-- PGP-A11b with seven positions: of the 216 rolls of three dice, six positions are chosen by
-- 31 rolls each and one (the seventh counted from the banker, position 6) by 30
-- (defaults.md, platform.md). The expected cells of the dice test must be exactly these.
with expected as (
    select unnest(range(0, 7)) as position_from_banker,
        unnest([31, 31, 31, 31, 31, 31, 30]) as ways
)

select e.position_from_banker, e.ways as expected_ways, o.ways as computed_ways
from expected as e
full join {{ ref('int_dice_position_odds') }} as o
    on o.position_from_banker = e.position_from_banker
where o.ways is distinct from e.ways
    or abs(o.probability - e.ways / 216) > 1e-15
