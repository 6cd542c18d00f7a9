{% test not_null_columns(model, columns) %}
{#- None of the listed columns is null: one test (one query) for all of a model's required
    columns, instead of one per column. -#}
select *
from {{ model }}
where {% for column in columns %}{{ column }} is null{% if not loop.last %} or {% endif %}{% endfor %}
{% endtest %}
