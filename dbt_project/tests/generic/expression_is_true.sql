{% test expression_is_true(model, expression) %}
{#- Every row satisfies `expression` (a boolean SQL expression over the model's columns). -#}
select *
from {{ model }}
where not coalesce(({{ expression }}), false)
{% endtest %}
