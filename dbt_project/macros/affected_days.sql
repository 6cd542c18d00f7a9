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

{% macro from_the_one_before(firsts, rows, column) -%}
    {#- Per table of `firsts` (table_id, first_change: the `column` value of its first change),
        where its ordered rows must be read again from (`from_value`): the largest `column` of
        `rows` (a relation with table_id) below its first change, or the first change itself
        when none is. From there each row is read beside the one before it. -#}
    select
        f.table_id,
        coalesce(max(r.{{ column }}) filter (where r.{{ column }} < f.first_change),
            f.first_change) as from_value
    from {{ firsts }} as f
    left join {{ rows }} as r on r.table_id = f.table_id
    group by f.table_id, f.first_change
{%- endmacro %}
