{% macro lake_column(source_name, table_name, column, sql_type) -%}
    {#- A lake column added after the lake was made (`consumers/schema.py`): the consumer adds
        it when it next opens the lake for writing, and the build only reads, so until then the
        column is null here rather than failing the build. -#}
    {%- if execute -%}
        {%- set names = adapter.get_columns_in_relation(source(source_name, table_name))
            | map(attribute='name') | map('lower') | list -%}
        {%- if column | lower in names -%}{{ column }}
        {%- else -%}null::{{ sql_type }} as {{ column }}{%- endif -%}
    {%- else -%}{{ column }}{%- endif -%}
{%- endmacro %}
