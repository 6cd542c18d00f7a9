{% macro revenue_sums() -%}
    {#- The revenue cells' additive measures summed (agg_revenue_hourly and
        agg_revenue_spot_hourly have the same measure columns). -#}
    sum(bet_lines) as bet_lines,
    sum(wagers) as wagers,
    sum(rounds) as rounds,
    sum(handle_cents) as handle_cents,
    sum(house_result_cents) as house_result_cents,
    sum(commission_cents) as commission_cents,
    sum(payout_cents) as payout_cents,
    sum(capped_cents) as capped_cents,
    sum(capped_payouts) as capped_payouts,
    sum(theoretical_win_cents) as theoretical_win_cents,
    sum(seconds_in_play) as seconds_in_play
{%- endmacro %}
