{% macro pin_lake_snapshot() -%}
    {#- Run first (on-run-start): re-attach the lake at the snapshot `croupier build` chose
        (CROUPIER_LAKE_SNAPSHOT), so every model and test of the build reads the same committed
        state while the consumer writes. Done here, not in profiles.yml, so the profile stays
        the same from build to build and dbt can reuse its parse. -#}
    {%- set snapshot = env_var('CROUPIER_LAKE_SNAPSHOT', '') -%}
    {%- if execute and snapshot -%}
        {%- set root = env_var('CROUPIER_LAKE_PATH', env_var('CROUPIER_DATA_DIR', 'var') ~ '/lake')
            | replace("'", "''") -%}
        {%- set catalog = env_var('CROUPIER_LAKE_CATALOG_PATH', 'ducklake:sqlite:' ~ root
            ~ '/catalog.sqlite') | replace("'", "''") -%}
        {%- set data = env_var('CROUPIER_LAKE_DATA_PATH', root ~ '/data/') | replace("'", "''") -%}
        {#- files in a bucket: httpfs, and the endpoint `croupier build` read from
            AWS_ENDPOINT_URL (infra/storage.py) as {setting: value} -#}
        {%- if data.startswith('s3://') -%}
            {%- do run_query('LOAD httpfs') -%}
            {%- for name, value in fromjson(env_var('CROUPIER_S3_SETTINGS', '{}')).items() -%}
                {%- do run_query('SET GLOBAL ' ~ name ~ ' = ' ~ tojson(value) | replace('"', "'")) -%}
            {%- endfor -%}
        {%- endif -%}
        {%- do run_query('DETACH lake') -%}
        {%- do run_query("ATTACH '" ~ catalog ~ "' AS lake (DATA_PATH '"
            ~ data ~ "', READ_ONLY, SNAPSHOT_VERSION " ~ (snapshot | int) ~ ")") -%}
    {%- endif -%}
{%- endmacro %}
