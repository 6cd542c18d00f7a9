{% macro drop_retired_models() -%}
    {#- Run last (on-run-end): drop the tables of marts renamed or retired, named here one by
        one, so that a marts store built before does not keep serving the old name's last,
        stale rows. Marts are derived data: a successor holds the same rows, rebuilt from the
        lake; a retired mart (successor none) is not needed any more. -#}
    {%- set retired = {
        'dealer_scorecard': 'agg_dealer_scorecard_daily',
        'stat_profile_dispersion': none,
    } -%}
    {%- if execute -%}
        {%- for old_name in retired -%}
            {%- do run_query('DROP TABLE IF EXISTS ' ~ target.database ~ '.' ~ target.schema ~ '.' ~ old_name) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
