{#-
  Statistical functions DuckDB lacks, as SQL expressions (no dbt packages can be installed).
  Every macro returns one DOUBLE expression; arguments are SQL expressions.
-#}

{% macro normal_sf(z) -%}
    {#- P(Z > z) for a standard normal Z: 0.5 * erfc(z / sqrt 2), with erfc from its Chebyshev
        fit (fractional error below 1.2e-7 everywhere, so tail p-values keep their digits). -#}
    (case when ({{ z }}) >= 0
        then 0.5 * {{ _erfc_positive('(' ~ z ~ ') / sqrt(2)') }}
        else 1 - 0.5 * {{ _erfc_positive('-(' ~ z ~ ') / sqrt(2)') }}
    end)
{%- endmacro %}

{% macro _erfc_positive(x) -%}
    {%- set t = '(1.0 / (1.0 + 0.5 * (' ~ x ~ ')))' -%}
    ({{ t }} * exp(-(({{ x }}) * ({{ x }})) - 1.26551223 + {{ t }} * (1.00002368 + {{ t }} * (0.37409196
        + {{ t }} * (0.09678418 + {{ t }} * (-0.18628806 + {{ t }} * (0.27886807 + {{ t }} * (-1.13520398
        + {{ t }} * (1.48851587 + {{ t }} * (-0.82215223 + {{ t }} * 0.17087277))))))))))
{%- endmacro %}

{% macro chi_square_sf(x, df) -%}
    {#- P(X > x) for X chi-square with integer `df` degrees of freedom, in closed form:
        even df: exp(-x/2) * sum_{k < df/2} (x/2)^k / k!
        odd df:  2 * P(Z > sqrt x) + 2 * phi(sqrt x) * sum_{j=1}^{(df-1)/2} x^(j-1/2) / (2j-1)!!
        Terms are summed in log space (lgamma) so large df and x stay finite. -#}
    (case
        when ({{ x }}) <= 0 then 1.0
        when ({{ df }}) % 2 = 0 then least(1.0, list_sum(list_transform(
            range(0, cast({{ df }} as bigint) // 2),
            k -> exp(k * ln(({{ x }}) / 2) - ({{ x }}) / 2 - lgamma(k + 1))
        )))
        else least(1.0, 2 * {{ normal_sf('sqrt(' ~ x ~ ')') }} + coalesce(list_sum(list_transform(
            range(1, (cast({{ df }} as bigint) - 1) // 2 + 1),
            j -> 2 * exp(
                (j - 0.5) * ln({{ x }}) - ({{ x }}) / 2 - 0.5 * ln(2 * pi())
                - j * ln(2) - lgamma(j + 0.5) + 0.5 * ln(pi())
            )
        )), 0))
    end)
{%- endmacro %}

{% macro binomial_two_sided_p(k, n, p) -%}
    {#- Exact two-sided binomial test p-value for k successes in n trials of probability p:
        2 * min(P(X <= k), P(X >= k)), capped at 1. Each tail is summed term by term from the
        log pmf over at most min(k, n - k) + 1 terms, whichever side is shorter. -#}
    least(1.0, 2 * least(
        {{ _binomial_cdf(k, n, p) }},
        1 - {{ _binomial_cdf('(' ~ k ~ ') - 1', n, p) }}
    ))
{%- endmacro %}

{% macro _binomial_cdf(k, n, p) -%}
    {#- P(X <= k): summed over j = 0..k, or as 1 - P(X > k) over j = k+1..n, whichever is shorter. -#}
    (case
        when ({{ k }}) < 0 then 0.0
        when ({{ k }}) >= ({{ n }}) then 1.0
        when ({{ k }}) <= ({{ n }}) / 2 then least(1.0, list_sum(list_transform(
            range(0, cast({{ k }} as bigint) + 1), j -> {{ _binomial_pmf('j', n, p) }})))
        else greatest(0.0, 1 - list_sum(list_transform(
            range(cast({{ k }} as bigint) + 1, cast({{ n }} as bigint) + 1), j -> {{ _binomial_pmf('j', n, p) }})))
    end)
{%- endmacro %}

{% macro _binomial_pmf(j, n, p) -%}
    exp(lgamma(({{ n }}) + 1) - lgamma({{ j }} + 1) - lgamma(({{ n }}) - {{ j }} + 1)
        + {{ j }} * ln({{ p }}) + (({{ n }}) - {{ j }}) * ln(1 - ({{ p }})))
{%- endmacro %}

{% macro z_95() -%}
    {#- The two-sided 95 % normal quantile, used for every "95 % interval". -#}
    1.959963984540054
{%- endmacro %}

{% macro round_sig(x, digits=5) -%}
    {#- `x` to `digits` significant digits: how p-values are reported (the normal tail above is
        good to about 1e-7 relative, so more digits would be noise). -#}
    (case when ({{ x }}) is null or ({{ x }}) = 0 then ({{ x }})
        else round(({{ x }}), {{ digits }} - 1 - cast(floor(log10(abs({{ x }}))) as integer))
    end)
{%- endmacro %}

{% macro fdr_cutoff(tested, family) -%}
    {#- Benjamini–Hochberg within each family of tests (`family`: the columns that make one,
        e.g. 'test_name, gaming_date'), at var('alert_false_discovery_rate'): the family's m
        p-values ranked, the largest p_(k) <= k q / m is the cutoff and every p <= it alerts.
        Under fair play (every null true) the chance that a family raises any alert is at most
        q, however many subjects it tests, and it stays so for positively dependent tests such
        as a table inside its game (PRDS). Selects `tested`'s rows with `fdr_cutoff` (null: the
        family raises nothing) and `fdr_bound` (k q / m for the row's own rank k; tied
        p-values, and rows without one, ranked by the rows' contents: in whatever order DuckDB
        met them, two builds of the same lake showed different bounds for the same rows). -#}
    {%- set q = var('alert_false_discovery_rate') -%}
    select
        *,
        max(case when p_value <= fdr_bound then p_value end)
            over (partition by {{ family }}) as fdr_cutoff
    from (
        select
            *,
            {{ q }} * row_number() over (
                partition by {{ family }} order by p_value nulls last, fdr_row
            )
                / nullif(count(p_value) over (partition by {{ family }}), 0) as fdr_bound
        from {{ tested }} as fdr_row
    )
{%- endmacro %}

{% macro exact_sum(expression, where=none) -%}
    {#- The sum of a DOUBLE expression, the same from any build of the same rows: each value
        rounded to 1e-9 and added as DECIMAL (exact), where a sum of doubles depends on the
        order DuckDB's threads add them in (two builds of one lake differed in the last digits
        of the pair and hold statistics). `where`: the aggregate's filter. -#}
    (sum(({{ expression }})::decimal(38, 9)){% if where %} filter (where {{ where }}){% endif %})::double
{%- endmacro %}
