-- The shifts of seeds/shifts.csv are the ones var('shift_hours') numbers: 24 / shift_hours of
-- them, numbered 1.., each starting shift_hours after the previous, the first at the start of
-- the gaming day. Every shift_no in the marts then names a row of dim_shifts.
with expected as (
    select
        n + 1 as shift_no,
        lpad((({{ var('gaming_day_start_hour') }} + n * {{ var('shift_hours') }}) % 24)::varchar,
            2, '0') || ':00' as starts_local
    from range(0, 24 // {{ var('shift_hours') }}) as t(n)
)

select e.shift_no, e.starts_local as expected_start, s.starts_local
from expected as e
full join {{ ref('shifts') }} as s on s.shift_no = e.shift_no
where s.starts_local is distinct from e.starts_local
