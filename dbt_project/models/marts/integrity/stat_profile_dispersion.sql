-- How widely a position's house result spreads per unit wagered, per rule profile and mix of
-- wagers (ante alone, ante + pair plus, ...): the sample variance of house_result / wager over
-- every such position. The hold and dealer x player tests take Var(a position's result) =
-- wager^2 x this. games.odds gives each wager's mean (the house edge) but not its variance;
-- pooling every position of a class estimates it from the draws themselves.
select
    profile,
    profile_version,
    spot_mix,
    count(*) as positions,
    avg(house_result_cents / wager_cents) as mean_result_per_unit,
    coalesce(var_samp(house_result_cents / wager_cents), 0) as result_variance_per_unit
from {{ ref('fct_positions') }}
where wager_cents > 0
group by profile, profile_version, spot_mix
