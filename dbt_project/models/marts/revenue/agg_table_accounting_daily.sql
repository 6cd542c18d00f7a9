-- Table accounting per casino day and table (DEF-ACC1), from the sessions opened that day.
select
    concat_ws('|', gaming_date, table_id) as accounting_id,
    gaming_date,
    table_id,
    any_value(game) as game,
    count(*) as sessions,
    count(*) filter (where is_closed) as closed_sessions,
    sum(opening_inventory_cents)::bigint as opening_inventory_cents,
    sum(closing_inventory_cents)::bigint as closing_inventory_cents,
    sum(fills_cents)::bigint as fills_cents,
    sum(credits_cents)::bigint as credits_cents,
    sum(drop_cents)::bigint as drop_cents,
    (sum(drop_cents) filter (where is_closed))::bigint as closed_drop_cents,
    sum(win_cents)::bigint as win_cents,
    sum(win_cents) / nullif(sum(drop_cents) filter (where is_closed), 0) as hold_pct,
    sum(handle_cents)::bigint as handle_cents,
    sum(settled_house_result_cents)::bigint as settled_house_result_cents,
    sum(win_minus_settled_cents)::bigint as win_minus_settled_cents,
    sum(theoretical_win_cents)::decimal(20, 6) as theoretical_win_cents
from {{ ref('fct_table_sessions') }}
group by gaming_date, table_id
