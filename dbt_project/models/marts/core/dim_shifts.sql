{{ config(tags=['project_only']) }}

-- The shifts of a casino day, in local time (seeds/shifts.csv; vars gaming_day_start_hour and
-- shift_hours place each timestamp in one of them).
select shift_no, shift_name, starts_local, ends_local
from {{ ref('shifts') }}
