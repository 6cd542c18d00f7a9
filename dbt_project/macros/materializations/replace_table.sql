{% materialization replace_table, adapter='duckdb' %}
    {#- A table rebuilt with one CREATE OR REPLACE TABLE and one commit. On a DuckLake target
        the built-in table materialization (create, rename, rename, drop) costs four catalog
        commits per model; this costs one, and readers still see the old table or the new one,
        never neither. -#}
    {%- set existing = load_cached_relation(this) -%}
    {%- set target = this.incorporate(type='table') -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- if existing is not none and not existing.is_table -%}
        {{ drop_relation_if_exists(existing) }}
    {%- endif -%}

    {% call statement('main') -%}
        create or replace table {{ target }} as (
            {{ compiled_code }}
        )
    {%- endcall %}

    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}

    {{ return({'relations': [target]}) }}
{% endmaterialization %}
