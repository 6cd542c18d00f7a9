{% macro player_seat(positions) -%}
    {#- The seat of a player's position in `positions` (fct_positions), NULL for the house's own
        bet: the join key to int_position_expectations. In a left join, the same condition on
        `positions` alone in the `on` makes DuckDB join by nested loops (262 s instead of
        0.16 s on a 100k-round lake). -#}
    case when {{ positions }}.bettor = 'player' then {{ positions }}.seat end
{%- endmacro %}

{% macro position_expectations(days) -%}
    {#- int_position_expectations' valued rows (note is null) for the positions of fct_positions
        that the filter `days` (macros/affected_days.sql) lets through. An expectation's
        lake_row_id is the newest of its round's player positions' (consumers/evidence.py), so
        on a build of some days only the rows from the smallest lake_row_id of those days'
        positions on can belong to them: the bound is read before the model or test runs and
        written as a number, so the scan skips the files of older rows instead of joining every
        expectation (0.38 -> 0.12 s for a day at a million rounds). No upper bound: a round
        whose lines were settled on two casino days has the row id of its later day's line. -#}
    {%- set where = 'note is null' -%}
    {%- if execute and days != 'true' -%}
        {%- set smallest = run_query('select min(lake_row_id) from ' ~ ref('fct_positions')
            ~ ' where ' ~ days).rows[0][0] -%}
        {%- set where = where ~ (' and lake_row_id >= ' ~ smallest
            if smallest is not none else ' and false') -%}
    {%- endif -%}
    {{- '(select * from ' ~ ref('int_position_expectations') ~ ' where ' ~ where ~ ')' -}}
{%- endmacro %}
