-- The progressive meter never drops except by a recorded hit (DEF-THP4), and it never jumps:
--   1. in the ledger, a movement that lowers the meter is a hit or a reset;
--   2. each movement starts where the table's previous one ended, unless the operator reset
--      the meter (progressive_meter_reset) in between;
--   3. the meter shown at the end of each round (progressive_meter_recorded) only falls below
--      the previous reading when a hit was paid from the meter in that round, or after a reset.
-- Only the rows not yet tested and those after them, each beside the one before it: per table,
-- from the row before its first new movement (and reading) on (everything on a full test).
with new_movements as (
    select table_id, min(occurred_at) as first_change
    from {{ ref('fct_progressive_ledger') }}
    where lake_row_id > {{ tested_up_to('jackpot_ledger') }}
    group by table_id
),

-- rows of one instant are ordered by round and entry: from the instant before the first new
-- movement, the row before it is always in
ledger_from as (
    {{ from_the_one_before('new_movements', ref('fct_progressive_ledger'), 'occurred_at') }}
),

ledger as (
    select
        l.*,
        lag(l.meter_after_cents) over w as previous_after_cents,
        lag(l.occurred_at) over w as previous_at
    from {{ ref('fct_progressive_ledger') }} as l
    inner join ledger_from as f on f.table_id = l.table_id and l.occurred_at >= f.from_value
    window w as (partition by l.table_id order by l.occurred_at, l.round_id, l.entry_no)
),

resets as (
    select table_id, occurred_at from {{ ref('int_meter_readings') }} where reading_kind = 'reset'
),

ledger_breaks as (
    select 'drop without a hit' as problem, table_id, round_id, entry_no, occurred_at
    from ledger
    where meter_after_cents < meter_before_cents and kind not in ('hit', 'reset')
    union all
    select 'meter jumped between movements', table_id, round_id, entry_no, occurred_at
    from ledger as l
    where previous_after_cents is not null
        and meter_before_cents <> previous_after_cents
        and kind <> 'reset'
        and not exists (
            select 1 from resets as r
            where r.table_id = l.table_id
                and r.occurred_at > l.previous_at and r.occurred_at <= l.occurred_at
        )
),

-- readings in the order the table sent them, which is the order the lake stored them in: a
-- device that restarts its numbering (EVT-SEQ seq_back, resynchronised) sends seq 1 again, so
-- seq does not order a table's readings
new_readings as (
    select table_id, min(lake_row_id) as first_change
    from {{ ref('int_meter_readings') }}
    where lake_row_id > {{ tested_up_to('events') }}
    group by table_id
),

readings_from as (
    {{ from_the_one_before('new_readings', ref('int_meter_readings'), 'lake_row_id') }}
),

readings as (
    select
        r.*,
        lag(r.meter_cents) over (partition by r.table_id order by r.lake_row_id) as previous_cents
    from {{ ref('int_meter_readings') }} as r
    inner join readings_from as f on f.table_id = r.table_id and r.lake_row_id >= f.from_value
),

meter_hits as (
    select distinct round_id from {{ ref('fct_progressive_ledger') }}
    where kind = 'hit' and meter_change_cents < 0
),

reading_breaks as (
    select 'recorded meter fell without a hit', table_id, round_id, null::integer, occurred_at
    from readings
    where reading_kind = 'recorded'
        and meter_cents < previous_cents
        and round_id not in (select round_id from meter_hits)
)

select * from ledger_breaks
union all
select * from reading_breaks
