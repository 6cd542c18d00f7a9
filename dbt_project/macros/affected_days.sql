{% macro affected_days(facts='fct_rounds') -%}
    {#- In an incremental run of a per-day aggregate: the casino days that received rows of
        `facts` since this model was last built (its `source_lake_row_id` remembers the largest
        row id it had read). Used with incremental_strategy='delete+insert' on gaming_date, so
        only those days are recomputed and replaced. Otherwise: every day. -#}
    {%- if is_incremental() -%}
        gaming_date in (
            select distinct gaming_date from {{ ref(facts) }}
            where lake_row_id > (select coalesce(max(source_lake_row_id), -1) from {{ this }})
        )
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}
