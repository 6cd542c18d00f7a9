{% macro new_lake_rows(column='lake_row_id') -%}
    {#- In an incremental run, only source rows the model has not seen: the lake is append-only
        and DuckLake row ids grow with every insert, so the largest row id already in the model
        is a watermark. `croupier build` runs a full refresh when the lake itself was replaced. -#}
    {%- if is_incremental() -%}
        {{ column }} > (select coalesce(max(lake_row_id), -1) from {{ this }})
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}
