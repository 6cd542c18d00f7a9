"""Floor: every table open now or with play today, its dealer, pace, money and open alerts,
refreshed every 30 seconds."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboards import data, ui

REFRESH = "30s"
FLOOR_COLUMNS = [
    "table_id", "game", "status", "dealer_id", "rounds", "rounds_per_hour", "handle_cents",
    "house_result_cents", "theoretical_win_cents", "open_alerts", "last_round_at",
]  # fmt: skip

ui.require("floor")
st.title("Floor")
ui.options_or_stop()


@st.fragment(run_every=REFRESH)
def live() -> None:
    ui.require("floor")  # each refresh: a user logged out, removed or demoted sees no more
    day = data.filter_options().last_day  # the latest casino day with play: today when live
    view = data.floor(day)
    ui.build_caption()
    st.subheader(f"Casino day {day:%A %d %B %Y}")
    tables = view.tables
    cols = st.columns(5)
    cols[0].metric("Tables open", f"{int(tables['is_open'].sum())} of {len(tables)}", border=True)
    cols[1].metric("Rounds", f"{view.rounds:,}", border=True)
    cols[2].metric("Handle", ui.money(view.handle_cents), border=True)
    cols[3].metric("House result", ui.money(view.house_result_cents), border=True)
    cols[4].metric(
        "Open alerts",
        f"{view.open_alerts:,}",
        delta=f"{view.open_critical} critical" if view.open_critical else None,
        delta_color="inverse",
        delta_arrow="off",
        border=True,
        help="Violations and statistical alerts of the day nobody acknowledged yet.",
    )
    shown = tables.assign(status=tables["is_open"].map({True: "open", False: "closed"}))
    ui.table(
        shown[FLOOR_COLUMNS],
        name="floor_tables",
        labels={"dealer_id": "dealer on duty", "last_round_at": "last round (UTC)"},
    )
    chart = pd.DataFrame(
        {
            "table": tables["table_id"],
            "game": tables["game"],
            "house result (S/)": tables["house_result_cents"] / 100,
            "theoretical win (S/)": tables["theoretical_win_cents"].astype("float64") / 100,
        }
    )
    bars = (
        alt.Chart(chart, title="House result by table, theoretical win as a tick")
        .mark_bar()
        .encode(
            x=alt.X("table:N", title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("house result (S/):Q"),
            color=alt.Color("game:N"),
            tooltip=list(chart.columns),
        )
    )
    ticks = (
        alt.Chart(chart)
        .mark_tick(color="black", thickness=3, size=30)
        .encode(x="table:N", y="theoretical win (S/):Q")
    )
    st.altair_chart(bars + ticks, width="stretch")


live()
