{{ config(tags=['project_only']) }}

-- The exact chance of each position the dice can choose (PGP-A11b): all 216 equally likely
-- ordered rolls of three fair dice, position = (total - 1) mod 7 counted from the banker.
-- Six positions get 31 rolls each and the seventh (the banker's right-hand neighbour) 30.
select
    (a.x + b.x + c.x - 1) % 7 as position_from_banker,
    count(*) as ways,
    count(*) / 216 as probability
from range(1, 7) as a(x), range(1, 7) as b(x), range(1, 7) as c(x)
group by position_from_banker
