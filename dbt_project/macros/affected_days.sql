{% macro affected_days(facts='fct_rounds') -%}
    {#- In an incremental run of a per-day aggregate: the casino days that received rows of
        `facts` since this model was last built (its `source_lake_row_id` remembers the largest
        row id it had read). Used with incremental_strategy='delete+insert' on gaming_date, so
        only those days are recomputed and replaced. Otherwise: every day. The days are read
        before the model runs and listed in its SQL, so that each scan of the facts skips the
        files of other days (macros/incremental.sql says why a subquery would not). -#}
    {%- if is_incremental() -%}
        {%- set days = run_query('select distinct gaming_date from ' ~ ref(facts)
            ~ ' where lake_row_id > ' ~ largest_in_this('source_lake_row_id') ~ ' order by 1') -%}
        {%- set listed = [] -%}
        {%- for day in days.columns[0].values() -%}
            {%- do listed.append("date '" ~ day ~ "'") -%}
        {%- endfor -%}
        {{ 'gaming_date in (' ~ listed | join(', ') ~ ')' if listed else 'false' }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}
