{% test unique_combination(model, columns) %}
{#- The listed columns together identify a row (a composite primary key). -#}
select {{ columns | join(', ') }}, count(*) as n_rows
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}
