{#-
  Incremental testing. `croupier build` passes, in CROUPIER_TESTED_UP_TO (JSON), the largest
  lake row id of each source table that the last successful build of the same lake read and
  tested. Generic tests on models that carry the source's `lake_row_id` then check only the
  rows above it: a test reads history that already passed once only on a full refresh (no
  variable: every row). The parent side of a relationships test is always read whole.
-#}

{% macro lake_source_of(model_name) -%}
    {#- The lake table whose row ids a model's `lake_row_id` holds (none: the model has none). -#}
    {%- set sources = {
        'stg_lake__events': 'events', 'int_table_events': 'events',
        'int_round_starts': 'events', 'int_bets_placed': 'events', 'int_dice_rolls': 'events',
        'int_meter_readings': 'events', 'int_card_rank_counts': 'events',
        'stg_lake__settlements': 'settlements', 'fct_bets': 'settlements',
        'fct_positions': 'settlements', 'int_position_expectations': 'settlements',
        'int_decision_evidence': 'settlements', 'fct_decisions': 'settlements',
        'stg_lake__rounds': 'rounds', 'fct_rounds': 'rounds',
        'stg_lake__violations': 'violations', 'fct_violations': 'violations',
        'stg_lake__jackpot_ledger': 'jackpot_ledger', 'fct_progressive_ledger': 'jackpot_ledger',
    } -%}
    {{- return(sources.get(model_name)) -}}
{%- endmacro %}

{% macro tested_up_to(source_table) -%}
    {#- The lake row id of `source_table` up to which rows were tested, or -1 (test them all).
        Read only when the test runs: a file that reads an environment variable while dbt
        parses it is parsed again whenever the variable changes, which it does every build. -#}
    {%- set raw = env_var('CROUPIER_TESTED_UP_TO', '') if execute else '' -%}
    {%- set marks = fromjson(raw) if raw else {} -%}
    {{- marks.get(source_table, -1) -}}
{%- endmacro %}

{% macro all_rows_of(model) -%}
    {#- What a test was handed as `model` (below) with the rows the last build tested put
        back (the same when none were left out): every row of the model that its `where`
        config lets through. A staging model of the lake is then read from its lake table (its
        columns and row id, which hold every staging key): dbt inlines an ephemeral model as
        one CTE, and DuckDB materializes whole a CTE that a query reads twice (new rows and
        all rows: 1.6 s for 34M events), where two reads of the table read only what each
        needs. -#}
    {%- set all_rows = modules.re.sub(' (and|where) lake_row_id > [0-9]+[)] dbt_subquery$',
        ') dbt_subquery', model | string) -%}
    {%- set inserted = modules.re.search(
        "ducklake_table_insertions[(]'[^']*', '[^']*', '([a-z_]+)', [0-9]+, [0-9]+[)]", all_rows)
        if all_rows != model | string else none -%}
    {%- set staged = modules.re.search('__dbt__cte__(stg_lake__[a-z_]+)', all_rows)
        if all_rows != model | string else none -%}
    {%- if inserted -%}
        {%- set all_rows = all_rows | replace(inserted.group(0),
            source('lake', inserted.group(1)) | string) -%}
    {%- elif staged and lake_source_of(staged.group(1)) -%}
        {%- set all_rows = all_rows | replace(staged.group(0),
            lake_rows(lake_source_of(staged.group(1)))) -%}
    {%- endif -%}
    {{- return(all_rows) -}}
{%- endmacro %}

{% macro duckdb__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- set name = relation.identifier | replace('__dbt__cte__', '') -%}
    {%- set source_table = lake_source_of(name) -%}
    {%- set since = tested_up_to(source_table) | int if source_table else -1 -%}
    {%- set filters = [] -%}
    {%- if where -%}{%- do filters.append('(' ~ where ~ ')') -%}{%- endif -%}
    {%- if since >= 0 -%}{%- do filters.append('lake_row_id > ' ~ since) -%}{%- endif -%}
    {%- set built = env_var('CROUPIER_LAKE_BUILT_SNAPSHOT', '') if execute else '' -%}
    {%- set pinned = env_var('CROUPIER_LAKE_SNAPSHOT', '') if execute else '' -%}
    {%- if since >= 0 and built and pinned and name.startswith('stg_lake__') -%}
        {#- A staging model of the lake: its new rows are those the lake inserted after the
            snapshot the last whole build read (whose largest row ids are the marks), read
            with ducklake_table_insertions, which opens only their files, where a row-id
            filter reads the row id of every row (DuckLake skips no file by row id). Its lake
            table's columns stand for the model's, as in all_rows_of. -#}
        {%- set relation = lake_rows(source_table, built | int + 1, pinned | int) -%}
    {%- endif -%}
    {%- if filters -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ filters | join(' and ')
            ~ ') dbt_subquery') -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}
