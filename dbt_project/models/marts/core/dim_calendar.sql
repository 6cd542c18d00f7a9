-- One row per casino day from the first to the last day with play (gaming_date: the local day
-- starting at var('gaming_day_start_hour')).
with bounds as (
    select min(gaming_date) as first_day, max(gaming_date) as last_day
    from {{ ref('fct_rounds') }}
)

select
    cast(d.day as date) as gaming_date,
    isodow(d.day) as iso_day_of_week,
    dayname(d.day) as day_name,
    yearweek(d.day) as year_week,
    date_trunc('month', d.day)::date as month,
    isodow(d.day) in (6, 7) as is_weekend
from bounds, range(bounds.first_day, bounds.last_day + interval 1 day, interval 1 day) as d(day)
