{{ config(materialized='incremental', incremental_strategy='delete+insert',
    unique_key='session_id') }}

-- Table accounting per session (DEF-ACC1): win = closing inventory + credits + drop - opening
-- inventory - fills; hold % = win / drop. Beside it, what the settlements say the house won
-- at that table in the same session, and the theoretical win (DEF-ACC2). A session still open
-- (no closing count yet) has no win.
-- Incremental: rounds belong to sessions by time, so a build replaces, per table, the session
-- in play just before the table's first change and every later one, each from all its rounds
-- as a whole build does. A change is a round the last build had not read (above its marks,
-- macros/tested_rows.sql), or a session whose tray story is new or differs from this table's
-- (a late fill; a late opening count, which starts a session and renumbers the later ones),
-- at its opening in either. (Rows the lake deleted since need a full refresh, as everywhere.)
with all_sessions as (
    select * from {{ ref('int_table_sessions') }}
),

{% if is_incremental() %}
{#- every column of a session's tray story, as int_table_sessions has them -#}
{%- set tray_columns = adapter.get_columns_in_relation(ref('int_table_sessions'))
    | map(attribute='name') | join(', ') %}
changes as (
    select table_id, min(changed_at) as first_change
    from (
        select table_id, opened_at as changed_at from (
            select {{ tray_columns }} from all_sessions
            except
            select {{ tray_columns }} from {{ this }}
        )
        union all
        select table_id, opened_at from (
            select {{ tray_columns }} from {{ this }}
            except
            select {{ tray_columns }} from all_sessions
        )
        union all
        select table_id, started_at from {{ ref('fct_rounds') }}
        where lake_row_id > {{ tested_up_to('rounds') }}
    )
    group by table_id
),

firsts as (
    {{ from_the_one_before('changes', 'all_sessions', 'opened_at') }}
),

sessions as (
    select s.*
    from all_sessions as s
    inner join firsts as f on f.table_id = s.table_id and s.opened_at >= f.from_value
),

rounds as (
    select r.*
    from {{ ref('fct_rounds') }} as r
    inner join firsts as f on f.table_id = r.table_id and r.started_at >= f.from_value
),
{% else %}
sessions as (
    select * from all_sessions
),

rounds as (
    select * from {{ ref('fct_rounds') }}
),
{% endif %}

-- each round belongs to the table's last session opened before it started
settled as (
    select
        s.session_id,
        count(*) as rounds,
        sum(r.handle_cents)::bigint as handle_cents,
        sum(r.settled_house_result_cents)::bigint as settled_house_result_cents,
        sum(r.commission_cents)::bigint as commission_cents,
        sum(r.theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents
    from rounds as r
    asof inner join all_sessions as s
        on s.table_id = r.table_id and r.started_at >= s.opened_at
    group by s.session_id
)

select
    s.session_id,
    s.table_id,
    s.game,
    s.casino_id,
    s.session_no,
    s.opened_at,
    s.counted_closed_at,
    s.table_closed_at,
    {{ gaming_date('s.opened_at') }} as gaming_date,
    s.closing_inventory_cents is not null as is_closed,
    s.opening_inventory_cents,
    s.closing_inventory_cents,
    s.fills_cents,
    s.credits_cents,
    s.drop_cents,
    s.fills,
    s.credits,
    s.drops,
    (s.closing_inventory_cents + s.credits_cents + s.drop_cents
        - s.opening_inventory_cents - s.fills_cents)::bigint as win_cents,
    (s.closing_inventory_cents + s.credits_cents + s.drop_cents
        - s.opening_inventory_cents - s.fills_cents) / nullif(s.drop_cents, 0) as hold_pct,
    coalesce(t.rounds, 0) as rounds,
    coalesce(t.handle_cents, 0)::bigint as handle_cents,
    coalesce(t.settled_house_result_cents, 0)::bigint as settled_house_result_cents,
    coalesce(t.commission_cents, 0)::bigint as commission_cents,
    coalesce(t.theoretical_win_cents, 0)::decimal(20, 6) as theoretical_win_cents,
    (s.closing_inventory_cents + s.credits_cents + s.drop_cents - s.opening_inventory_cents
        - s.fills_cents - coalesce(t.settled_house_result_cents, 0))::bigint
        as win_minus_settled_cents
from sessions as s
left join settled as t on t.session_id = s.session_id
