-- What-if re-settlement per casino day, game and table: the lake's rounds settled again under
-- another rule profile by `croupier what-if --store`, which keeps one row per round in a
-- Parquet file beside the marts (not a lake table) and builds this model from it. Built on
-- request only: enabled while CROUPIER_WHAT_IF_PATH names that file (only `what-if --store`
-- sets it), so the normal build neither builds nor needs it, and the table it last built
-- stays in the marts. The casino day is fct_rounds's: that of the round's end.
{{ config(
    enabled=env_var('CROUPIER_WHAT_IF_PATH', '') != '',
    tags=['what_if'],
) }}
with compared as (
    select
        *,
        {{ gaming_date('coalesce(ended_at, started_at)') }} as gaming_date
    from read_parquet('{{ env_var("CROUPIER_WHAT_IF_PATH", "") | replace("'", "''") }}')
)
select
    concat_ws('|', whatif_profile, decisions, gaming_date, table_id) as what_if_id,
    whatif_profile,
    decisions,
    gaming_date,
    game,
    table_id,
    count(*) as rounds,
    string_agg(distinct recorded_profile, ', ' order by recorded_profile) as recorded_profiles,
    sum(handle_cents)::bigint as handle_cents,
    sum(house_result_cents)::bigint as house_result_cents,
    sum(house_result_cents) / nullif(sum(handle_cents), 0) as hold_pct,
    sum(whatif_handle_cents)::bigint as whatif_handle_cents,
    sum(whatif_house_result_cents)::bigint as whatif_house_result_cents,
    sum(whatif_house_result_cents) / nullif(sum(whatif_handle_cents), 0) as whatif_hold_pct,
    (sum(whatif_house_result_cents) - sum(house_result_cents))::bigint as difference_cents,
    sum(decisions_changed)::bigint as decisions_changed,
    max(lake_snapshot_id) as lake_snapshot_id,
    max(stored_at) as stored_at
from compared
group by whatif_profile, decisions, gaming_date, game, table_id
