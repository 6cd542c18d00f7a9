{% macro drop_retired_models() -%}
    {#- Run last (on-run-end): drop the tables of marts renamed away, named here one by one, so
        that a marts store built before a rename does not keep serving the old name's last,
        stale rows beside the new mart. Marts are derived data: the new name holds the same
        rows, rebuilt from the lake. -#}
    {%- set retired = {'dealer_scorecard': 'agg_dealer_scorecard_daily'} -%}
    {%- if execute -%}
        {%- for old_name in retired -%}
            {%- do run_query('DROP TABLE IF EXISTS ' ~ target.database ~ '.' ~ target.schema ~ '.' ~ old_name) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
