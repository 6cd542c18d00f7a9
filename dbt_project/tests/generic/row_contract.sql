{% test row_contract(model, not_null=[], unique=[], repeat_keeps={}, unique_together=[], accepted={},
    references={}, expressions=[]) %}
{#- A model's row-level contract in one test: one query and one dbt node instead of one per
    check, which is what an incremental build spends its time on (dbt's own work per node
    costs more than these queries). Each failing row names its check and what failed:
      not_null         columns none of which may be null (detail: the null ones);
      unique           columns each unique on its own, nulls left out (dbt's `unique`);
      repeat_keeps     unique column -> a column whose value a repeat of its key keeps (an
                       event stored twice keeps its occurred_at): on an incremental build a
                       new key is looked up only among the rows whose value of that column
                       lies within the new rows' range, which DuckLake reads by its files'
                       statistics instead of reading every key (a full build reads them all);
      unique_together  lists of columns that together identify a row, nulls counted as equal;
      accepted         column -> the values it may take, nulls left out (dbt's
                       `accepted_values`); a string value is compared as a string, a number
                       as a number;
      references       column -> the model (ref) holding every value it may take, nulls left
                       out, in a column of the same name (dbt's `relationships`); the other
                       model is read whole (the check names the model, an ephemeral one
                       without dbt's CTE prefix);
      expressions      boolean SQL expressions over the model's columns that every row
                       satisfies, null counting as false (detail: the row).
    The model is read once. On an incremental build `model` holds only the rows the last
    build did not test (macros/tested_rows.sql); a unique key among them is then looked up
    among all the model's rows, so a new row repeating a key already tested fails too. -#}
{%- set checks = [] -%}
{%- set all_rows = all_rows_of(model) -%}
{%- set widened = all_rows != model | string -%}
{%- if not_null -%}
    {%- set missing = [] -%}
    {%- set any_null = [] -%}
    {%- for column in not_null -%}
        {%- do missing.append("case when " ~ column ~ " is null then '" ~ column ~ "' end") -%}
        {%- do any_null.append(column ~ " is null") -%}
    {%- endfor -%}
    {%- do checks.append(
        "select 'not_null' as failed_check, concat_ws(', ', " ~ missing | join(', ')
        ~ ") as detail from contract_rows where " ~ any_null | join(' or ')
    ) -%}
{%- endif -%}
{%- for column in unique -%}
    {%- set kept = repeat_keeps.get(column) -%}
    {%- do checks.append(
        "select 'unique " ~ column ~ "' as failed_check, cast(" ~ column ~ " as varchar) as detail"
        ~ (" from all_rows where " ~ column ~ " in (select " ~ column ~ " from contract_rows)"
           ~ (" and " ~ kept ~ " between (select min(" ~ kept ~ ") from contract_rows) and"
              ~ " (select max(" ~ kept ~ ") from contract_rows)" if kept else "")
           if widened else " from contract_rows where " ~ column ~ " is not null")
        ~ " group by " ~ column ~ " having count(*) > 1"
    ) -%}
{%- endfor -%}
{%- for columns in unique_together -%}
    {%- set key = columns | join(', ') -%}
    {%- if widened -%}
        {%- set same = [] -%}
        {%- for column in columns -%}
            {%- do same.append("a." ~ column ~ " is not distinct from n." ~ column) -%}
        {%- endfor -%}
        {%- set rows = "(select a.* from all_rows a semi join (select distinct " ~ key
            ~ " from contract_rows) n on " ~ same | join(' and ') ~ ") keyed" -%}
    {%- else -%}
        {%- set rows = "contract_rows" -%}
    {%- endif -%}
    {%- do checks.append(
        "select 'unique_together " ~ key ~ "' as failed_check, concat_ws('|', " ~ key
        ~ ") as detail from " ~ rows ~ " group by " ~ key ~ " having count(*) > 1"
    ) -%}
{%- endfor -%}
{%- for column, values in accepted.items() -%}
    {%- set allowed = [] -%}
    {%- for value in values -%}
        {%- do allowed.append("'" ~ value | replace("'", "''") ~ "'" if value is string else value | string) -%}
    {%- endfor -%}
    {%- do checks.append(
        "select 'accepted " ~ column ~ "' as failed_check, cast(" ~ column ~ " as varchar) as detail"
        ~ " from contract_rows where " ~ column ~ " not in (" ~ allowed | join(', ') ~ ")"
        ~ " group by " ~ column
    ) -%}
{%- endfor -%}
{%- for column, parent in references.items() -%}
    {%- do checks.append(
        "select 'references " ~ column ~ " " ~ parent.identifier | replace('__dbt__cte__', '')
        ~ "' as failed_check, cast(c."
        ~ column ~ " as varchar) as detail from contract_rows as c anti join " ~ parent
        ~ " as p on p." ~ column ~ " = c." ~ column ~ " where c." ~ column ~ " is not null"
        ~ " group by c." ~ column
    ) -%}
{%- endfor -%}
{%- for expression in expressions -%}
    {%- do checks.append(
        "select 'expression " ~ expression.split() | join(' ') | replace("'", "''")
        ~ "' as failed_check, cast(r as varchar) as detail from contract_rows as r where not"
        ~ " coalesce((" ~ expression ~ "), false)"
    ) -%}
{%- endfor -%}
{%- if not checks -%}
    {{ exceptions.raise_compiler_error("row_contract on " ~ model ~ " names no check") }}
{%- endif -%}
with contract_rows as materialized (select * from {{ model }})
{%- if widened and (unique or unique_together) %},
all_rows as (select * from {{ all_rows }})
{%- endif %}
{{ checks | join('\nunion all\n') }}
{% endtest %}
