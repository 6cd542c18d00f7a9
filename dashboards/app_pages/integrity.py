"""Integrity: the critical violations the lake committed since the shown build, live; violations
by rule (with the article's text), severity and dealer; payout accuracy; house-way compliance;
statistical alerts explained; acknowledgements and their trail."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboards import acks, data, ui

SEVERITIES = ["critical", "major", "minor"]
LIVE_REFRESH_SECONDS = 2
LIVE_LISTED = 5  # the newest, in words above the panel's table
LIVE_TITLE = "Critical violations since the last build"
LIVE_LABELS = {
    "occurred_at": "when (UTC)", "table_id": "table", "round_id": "round", "rule_id": "rule",
    "rule_text": "rule text", "check_name": "check", "dealer_id": "dealer",
    "evidence": "evidence", "violation_id": "violation id",
}  # fmt: skip


@st.fragment(run_every=LIVE_REFRESH_SECONDS)
def live_violations(f: data.Filters, severities: tuple[str, ...]) -> None:
    """The critical violations the lake committed after the snapshot the shown build was made
    from, read from the lake itself every LIVE_REFRESH_SECONDS (this fragment alone reruns)."""
    ui.require("integrity")  # a fragment's rerun runs neither the router nor the page's top
    st.subheader(LIVE_TITLE)
    if severities and "critical" not in severities:
        st.caption("The Severity filter leaves critical violations out.")
        return
    try:
        info = data.build_info()
    except data.NoMarts:  # the marts went away since the page's run
        info = None
    if info is None:
        st.info(
            "No build to compare with: run `croupier build`; until then the marts below are "
            "all there is.",
            icon=":material/info:",
        )
        return
    try:
        live = data.live_critical_violations(f, info.lake_snapshot_id)
    except data.LakeAway as exc:
        st.warning(
            f"Live violations unavailable: {ui.plain(exc)}. The rest of the page shows "
            "the last build.",
            icon=":material/cloud_off:",
        )
        return
    scope = f"Read from the lake every {LIVE_REFRESH_SECONDS} s, whatever the dates picked"
    if f.games or f.tables or f.dealers:
        scope += " (the game, table and dealer filters apply)"
    if live.until > live.since:
        st.caption(
            f"{scope}: what lake snapshots {live.since + 1} to {live.until} committed, after "
            f"snapshot {live.since} the build was made from."
        )
    else:
        st.caption(
            f"{scope}: the lake is at snapshot {live.until}, the build was made from "
            f"snapshot {live.since}."
        )
    if live.until < live.since:
        st.warning(
            "The lake is older than the build (made anew?): run `croupier build`.",
            icon=":material/history:",
        )
    elif live.expired:
        st.warning(
            "The lake no longer keeps the snapshots since this build: run `croupier build`.",
            icon=":material/history:",
        )
    elif live.count == 0:
        st.success("No critical violation since the last build.", icon=":material/check_circle:")
    else:
        more = f" (the latest {len(live.rows)} shown)" if live.count > len(live.rows) else ""
        st.markdown(
            f":material/report: :red[**{live.count:,} critical violation(s)**] since the last "
            f"build{more}."
        )
        for v in live.rows.head(LIVE_LISTED).to_dict("records"):
            where = f"table {ui.plain(v['table_id'])}"
            if isinstance(v["round_id"], str):
                where += f" · round {ui.plain(v['round_id'])}"
            st.markdown(
                f"- **{ui.plain(v['rule_id'])}** · {v['occurred_at']:%Y-%m-%d %H:%M:%S} UTC · "
                f"{where}: {ui.plain(v['rule_text'])}"
            )
        st.dataframe(
            live.rows,
            hide_index=True,
            key="df_live_violations",
            column_config={c: st.column_config.Column(label) for c, label in LIVE_LABELS.items()},
        )


user = ui.require("integrity")
st.title("Integrity")
options = ui.options_or_stop()
f = ui.filters(options, page="integrity")
severities = tuple(st.sidebar.multiselect("Severity", SEVERITIES, key="integrity_severity"))
ui.build_caption()
live_violations(f, severities)

by_rule = data.violations_by(f, "rule", severities)
payouts = data.payout_accuracy(f)
way = data.house_way(f)
alerts = data.statistical_alerts(f)
detail = data.violations_detail(f, severities)
summary = data.integrity_summary(by_rule, payouts, way, detail, alerts)

row = st.columns(5)
row[0].metric("Violations", f"{summary.violations:,}", border=True)
row[1].metric("Critical", f"{summary.critical:,}", border=True)
row[2].metric(
    "Payout accuracy",
    ui.pct(summary.payout_accuracy),
    border=True,
    help="Share of recorded payouts equal to what the rules pay.",
)
row[3].metric(
    "House-way compliance",
    ui.pct(summary.house_way_compliance),
    border=True,
    help="Share of Pai Gow hands the dealer set by the posted house way (PGP-A13c).",
)
row[4].metric(
    "Open alerts",
    f"{summary.open_alerts:,}",
    border=True,
    help="Statistical alerts and the latest violations not acknowledged yet.",
)

st.subheader("Violations by rule")
if by_rule.empty:
    st.info("No violations match these filters.")
else:
    chart = by_rule.rename(columns={"key": "rule"})
    st.altair_chart(
        alt.Chart(chart)
        .mark_bar()
        .encode(
            x=alt.X("violations:Q"),
            y=alt.Y("rule:N", sort="-x", title=None),
            color=alt.condition("datum.critical > 0", alt.value("#d62728"), alt.value("#4c78a8")),
            tooltip=["rule:N", "violations:Q", "rounds_affected:Q", "critical:Q", "rule_text:N"],
        )
        .properties(title="Violations per rule (red: some critical)"),
        width="stretch",
    )
    ui.table(chart, name="violations_by_rule")

left, right = st.columns(2)
with left:
    st.subheader("By severity")
    by_severity = data.violations_by(f, "severity", severities).rename(columns={"key": "severity"})
    st.altair_chart(
        alt.Chart(by_severity)
        .mark_arc(innerRadius=50)
        .encode(
            theta="violations:Q",
            color=alt.Color(
                "severity:N",
                scale=alt.Scale(domain=SEVERITIES, range=["#d62728", "#ff7f0e", "#9ecae1"]),
            ),
            tooltip=["severity:N", "violations:Q", "rounds_affected:Q"],
        ),
        width="stretch",
    )
    ui.table(by_severity, name="violations_by_severity")
with right:
    st.subheader("By dealer")
    by_dealer = data.violations_by(f, "dealer", severities).rename(columns={"key": "dealer"})
    st.altair_chart(
        alt.Chart(by_dealer.head(15))
        .mark_bar()
        .encode(
            x="violations:Q",
            y=alt.Y("dealer:N", sort="-x", title=None),
            tooltip=["dealer:N", "violations:Q", "critical:Q"],
        )
        .properties(title="Top 15 dealers"),
        width="stretch",
    )
    ui.table(by_dealer, name="violations_by_dealer")

left, right = st.columns(2)
with left:
    st.subheader("Payout accuracy")
    ui.table(payouts, name="payout_accuracy")
with right:
    st.subheader("House-way compliance")
    ui.table(way, name="house_way_compliance")

st.subheader("Statistical alerts")
st.caption(
    "Tests the marts run on every table, dealer, game, deck, shuffler and dealer × player "
    "pair; only those that failed are listed, most improbable first."
)
if alerts.empty:
    st.success("No statistical test failed in these days.", icon=":material/check_circle:")
else:
    for record in alerts.head(5).to_dict("records"):
        mark = "✓ acknowledged" if record["acknowledged"] else "open"
        test, text = ui.plain(record["test_name"]), ui.plain(record["explanation"])
        st.markdown(f"- **{test}** · {mark}: {text}")
    ui.table(alerts, name="statistical_alerts")

st.subheader("Latest violations")
ui.table(detail, name="violations")

st.subheader("Acknowledge alerts")
choices = data.open_alert_choices(detail, alerts)
with st.form("acknowledge", clear_on_submit=True):
    picked = st.multiselect(
        "Alerts",
        list(choices),
        format_func=lambda k: choices[k],
        key="ack_alerts",
        max_selections=200,
    )
    note = st.text_area(
        "Note (what was checked, what was decided)", key="ack_note", max_chars=acks.MAX_NOTE
    )
    if st.form_submit_button("Acknowledge", type="primary"):
        try:
            written = acks.acknowledge(
                data.current_store().acks,
                [data.alert_key(choice) for choice in picked],
                user=user.name,
                role=user.role.value,
                note=note,
            )
        except acks.AckError as exc:
            st.warning(str(exc))
        else:
            who = ui.plain(user.name)
            st.session_state["ack_done"] = f"{written} alert(s) acknowledged by {who}."
            st.rerun()  # redraw every table with the new acknowledgements
if done := st.session_state.pop("ack_done", None):
    st.success(done, icon=":material/task_alt:")

st.subheader("Audit trail")
trail = data.audit_trail()
if trail.empty:
    st.caption("No acknowledgement yet.")
else:
    ui.table(trail, name="acknowledgements")
