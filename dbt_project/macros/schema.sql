{% macro generate_schema_name(custom_schema_name, node) -%}
    {#- Models go to the schema they name (staging, intermediate) or to the target schema, not
        to dbt's default `<target>_<custom>`: analysts query `marts.main.fct_bets`. -#}
    {{ custom_schema_name | trim if custom_schema_name is not none else target.schema }}
{%- endmacro %}
