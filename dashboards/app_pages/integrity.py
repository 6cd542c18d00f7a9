"""Integrity: violations by rule (with the article's text), severity and dealer; payout
accuracy; house-way compliance; statistical alerts explained; acknowledgements and their trail."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboards import acks, data, ui

SEVERITIES = ["critical", "major", "minor"]

user = ui.require("integrity")
st.title("Integrity")
options = ui.options_or_stop()
f = ui.filters(options, page="integrity")
severities = tuple(st.sidebar.multiselect("Severity", SEVERITIES, key="integrity_severity"))
ui.build_caption()

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
