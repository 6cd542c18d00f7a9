-- Violation counts per casino day, shift, table, dealer, rule and severity: additive, so any
-- roll-up (by rule, by dealer, by shift...) is a sum over this table.
select
    concat_ws('|', gaming_date, shift_no, table_id, dealer_id, rule_id, severity)
        as violation_group_id,
    gaming_date,
    shift_no,
    table_id,
    any_value(game) as game,
    dealer_id,
    rule_id,
    severity,
    bool_and(dealer_accountable) as dealer_accountable,
    count(*) as violations,
    count(distinct round_id) as rounds_affected
from {{ ref('fct_violations') }}
group by gaming_date, shift_no, table_id, dealer_id, rule_id, severity
