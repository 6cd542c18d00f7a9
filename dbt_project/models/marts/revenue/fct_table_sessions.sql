-- Table accounting per session (DEF-ACC1): win = closing inventory + credits + drop - opening
-- inventory - fills; hold % = win / drop. Beside it, what the settlements say the house won
-- at that table in the same session, and the theoretical win (DEF-ACC2). A session still open
-- (no closing count yet) has no win.
with sessions as (
    select * from {{ ref('int_table_sessions') }}
),

-- each round belongs to the table's last session opened before it started
settled as (
    select
        s.session_id,
        count(*) as rounds,
        sum(r.handle_cents)::bigint as handle_cents,
        sum(r.settled_house_result_cents)::bigint as settled_house_result_cents,
        sum(r.commission_cents)::bigint as commission_cents,
        sum(r.theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents
    from {{ ref('fct_rounds') }} as r
    asof inner join sessions as s
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
