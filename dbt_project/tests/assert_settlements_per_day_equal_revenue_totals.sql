-- Σ settlements per casino day = the revenue mart's totals. The day's sums are taken straight
-- from the lake's settlements (staging), independently of fct_bets, and compared with the
-- casino-wide daily row of agg_revenue and with fct_rounds. Any row returned is a mismatch.
-- Only the days from the first that received settlements not yet tested (all days when none
-- were): that day's start, read before the test runs, bounds the scan of the lake, which then
-- skips the files of earlier days.
{%- set first = 'null::timestamptz' -%}
{%- if execute -%}
    {%- set first = run_query(
        'select coalesce(epoch_us(min(settled_at)), -1) from ' ~ source('lake', 'settlements')
        ~ ' where rowid > ' ~ tested_up_to('settlements')).columns[0].values()[0] | int -%}
    {%- set first = 'make_timestamptz(' ~ first ~ ')' if first >= 0 else 'null::timestamptz' -%}
{%- endif %}
with source_days as (
    select
        {{ gaming_date('settled_at') }} as gaming_date,
        count(*) as bet_lines,
        count(distinct round_id) as rounds,
        sum(wager_cents) as handle_cents,
        sum(house_result_cents) as house_result_cents,
        sum(commission_cents) as commission_cents,
        sum(payout_cents) as payout_cents,
        sum(capped_cents) as capped_cents
    from {{ ref('stg_lake__settlements') }}
    -- a casino day lasts 24 hours: the first one started at most a day before the first row
    where settled_at >= {{ first }} - interval 1 day
    group by 1
    having {{ gaming_date('min(settled_at)') }} >= {{ gaming_date(first) }}
),

days as (select gaming_date from source_days),

mart_days as (
    select gaming_date, sum(bet_lines) as bet_lines, sum(rounds) as rounds,
        sum(handle_cents) as handle_cents, sum(house_result_cents) as house_result_cents,
        sum(commission_cents) as commission_cents, sum(payout_cents) as payout_cents,
        sum(capped_cents) as capped_cents
    from {{ ref('agg_revenue') }}
    where period = 'day' and dimension = 'casino'
        and gaming_date in (select gaming_date from days)
    group by gaming_date
),

round_days as (
    select gaming_date, sum(handle_cents) as handle_cents,
        sum(settled_house_result_cents) as house_result_cents,
        sum(commission_cents) as commission_cents
    from {{ ref('fct_rounds') }}
    where gaming_date in (select gaming_date from days)
    group by gaming_date
    having sum(bet_lines) > 0
)

select coalesce(s.gaming_date, m.gaming_date, r.gaming_date) as gaming_date, s.*, m.*, r.*
from source_days as s
full join mart_days as m on m.gaming_date = s.gaming_date
full join round_days as r on r.gaming_date = coalesce(s.gaming_date, m.gaming_date)
where s.bet_lines is distinct from m.bet_lines
    or s.rounds is distinct from m.rounds
    or s.handle_cents is distinct from m.handle_cents
    or s.house_result_cents is distinct from m.house_result_cents
    or s.commission_cents is distinct from m.commission_cents
    or s.payout_cents is distinct from m.payout_cents
    or s.capped_cents is distinct from m.capped_cents
    or s.handle_cents is distinct from r.handle_cents
    or s.house_result_cents is distinct from r.house_result_cents
    or s.commission_cents is distinct from r.commission_cents
