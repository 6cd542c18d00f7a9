{#- Casino time: the gaming day and its shifts, in the casino's local time zone (var
    `casino_timezone`). A gaming day starts at `gaming_day_start_hour` local time, so a night's
    play belongs to one day; it has 24 / `shift_hours` shifts numbered from 1. -#}

{% macro local_time(ts) -%}
    timezone('{{ var("casino_timezone") }}', {{ ts }})
{%- endmacro %}

{% macro gaming_date(ts) -%}
    cast({{ local_time(ts) }} - to_hours({{ var("gaming_day_start_hour") }}) as date)
{%- endmacro %}

{% macro shift_no(ts) -%}
    cast(1 + floor(
        (hour({{ local_time(ts) }} - to_hours({{ var("gaming_day_start_hour") }})) * 60
         + minute({{ local_time(ts) }}))
        / (60 * {{ var("shift_hours") }})
    ) as integer)
{%- endmacro %}
