{% macro affected_days(facts='fct_rounds') -%}
    {#- In an incremental run of a per-day aggregate: the casino days that received rows of
        `facts` since this model was last built (its `source_lake_row_id` remembers the largest
        row id it had read). Used with incremental_strategy='delete+insert' on gaming_date, so
        only those days are recomputed and replaced. Otherwise: every day. A model that needs
        it more than once sets it once: each call queries. -#}
    {%- if is_incremental() -%}
        gaming_date in {{ listed_days('select distinct gaming_date from ' ~ ref(facts)
            ~ ' where lake_row_id > ' ~ largest_in_this('source_lake_row_id')) }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{% macro listed_days(days) -%}
    {#- The dates the query `days` returns, as a SQL list: `(date '...', ...)`, or `(null)`
        when there are none (`x in (null)` holds for no row). The query runs before the model
        or test does, and the dates are listed in its SQL, so that each scan skips the files
        of other days (macros/incremental.sql says why a subquery would not). -#}
    {%- set listed = [] -%}
    {%- for day in run_query(days).columns[0].values() -%}
        {%- do listed.append("date '" ~ day ~ "'") -%}
    {%- endfor -%}
    {{- '(' ~ (listed | join(', ') if listed else 'null') ~ ')' -}}
{%- endmacro %}
