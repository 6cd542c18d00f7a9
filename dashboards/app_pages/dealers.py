"""Dealers: a scorecard per dealer (pace, error rate, payout accuracy, voids, house way, hold
vs expected given the players' decisions, with its 95 % band)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboards import data, ui

ui.require("dealers")
st.title("Dealers")
options = ui.options_or_stop()
f = ui.filters(options, page="dealers", dims=("games", "tables", "dealers"))
ui.build_caption()

cards = data.dealer_scorecards(f)
if cards.empty:
    st.info("No dealer ran a round in these days.")
    st.stop()

chart = pd.DataFrame(
    {
        "dealer": cards["dealer_id"],
        "rounds per hour": cards["rounds_per_hour"],
        "error rate": cards["error_rate"],
        "payout accuracy": cards["payout_accuracy"],
        "hold vs expected (z)": cards["z"],
        "rounds": cards["rounds"],
    }
)
left, right = st.columns(2)
left.altair_chart(
    alt.Chart(chart, title="Pace and error rate (size: rounds)")
    .mark_circle(opacity=0.7)
    .encode(
        x=alt.X("rounds per hour:Q", scale=alt.Scale(zero=False)),
        y=alt.Y("error rate:Q", axis=alt.Axis(format="%")),
        size="rounds:Q",
        color=alt.Color("payout accuracy:Q", scale=alt.Scale(scheme="redyellowgreen")),
        tooltip=list(chart.columns),
    ),
    width="stretch",
)
right.altair_chart(
    alt.Chart(
        chart,
        title="Hold vs expected given the players' decisions: z per dealer (beyond ±1.96 is "
        "unusual)",
    )
    .mark_bar()
    .encode(
        x=alt.X("dealer:N", sort="-y", title=None, axis=alt.Axis(labels=len(chart) <= 40)),
        y="hold vs theoretical (z):Q",
        color=alt.condition(
            "abs(datum['hold vs expected (z)']) > 1.96",
            alt.value("#d62728"),
            alt.value("#4c78a8"),
        ),
        tooltip=list(chart.columns),
    ),
    width="stretch",
)
st.subheader("Scorecard")
ui.table(cards, name="dealer_scorecard", labels={"z": "hold vs expected z"})
