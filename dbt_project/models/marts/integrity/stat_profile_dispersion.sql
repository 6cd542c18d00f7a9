-- How widely a position's house result spreads per unit wagered, per rule profile and mix of
-- wagers (ante alone, ante + pair plus, ...): the sample variance of house_result / wager over
-- every such position. The hold and dealer x player tests take Var(a position's result) =
-- wager^2 x this. games.odds gives each wager's mean (the house edge) but not its variance;
-- pooling every position of a class estimates it from the draws themselves.
-- Computed from exact sums (each ratio rounded to 1e-9, then summed as DECIMAL), so a build gives
-- the same figures to the last bit whatever order its threads add the rows in: var_samp over
-- doubles differed in its last digits from build to build, and so did every figure built on it.
with units as (
    select
        profile,
        profile_version,
        spot_mix,
        (house_result_cents / wager_cents)::decimal(18, 9) as x
    from {{ ref('fct_positions') }}
    where wager_cents > 0
),

sums as (
    select
        profile,
        profile_version,
        spot_mix,
        count(*) as positions,
        sum(x) as sum_x,
        sum(x * x) as sum_x2
    from units
    group by profile, profile_version, spot_mix
)

select
    profile,
    profile_version,
    spot_mix,
    positions,
    sum_x::double / positions as mean_result_per_unit,
    case
        when positions > 1
            then greatest(
                (sum_x2::double - sum_x::double * sum_x::double / positions) / (positions - 1), 0
            )
        else 0
    end as result_variance_per_unit
from sums
