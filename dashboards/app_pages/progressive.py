"""Progressive: the jackpot meter (the liability) over time, contributions and hits per table
and day (DEF-THP4)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboards import data, ui

ui.require("progressive")
st.title("Progressive jackpot")
options = ui.options_or_stop()
f = ui.filters(options, page="progressive", dims=("tables",), table_games=("holdem",))
ui.build_caption()

tables = data.progressive_tables(f)
if tables.empty:
    st.info("No progressive movement in these days.")
    st.stop()
row = st.columns(4)
row[0].metric(
    "Liability",
    ui.money(int(tables["liability_cents"].sum())),
    border=True,
    help="Σ of each table's meter after its last movement in these days.",
)
row[1].metric("Contributions", ui.money(int(tables["contributions_cents"].sum())), border=True)
row[2].metric(
    "Hits paid",
    ui.money(int(tables["hits_cents"].sum())),
    delta=f"{int(tables['hits'].sum())} hits",
    delta_color="off",
    border=True,
)
row[3].metric(
    "Paid from the meter", ui.money(int(tables["paid_from_meter_cents"].sum())), border=True
)

series = data.meter_series(f)
meter = pd.DataFrame(
    {
        "table": series["table_id"],
        "at": series["bucket_at"],
        "meter (S/)": series["meter_cents"] / 100,
    }
)
st.altair_chart(
    alt.Chart(meter, title="Meter over time (the liability), per table")
    .mark_line(interpolate="step-after")
    .encode(
        x=alt.X("at:T", title="UTC"),
        y=alt.Y("meter (S/):Q", scale=alt.Scale(zero=False)),
        color="table:N",
        tooltip=["table:N", "at:T", "meter (S/):Q"],
    ),
    width="stretch",
)
daily = data.progressive_daily(f)
flows = daily.melt(
    id_vars="gaming_date", value_vars=["contributions_cents", "hits_cents"], var_name="flow"
)
flows["S/"] = flows["value"] / 100
flows["flow"] = flows["flow"].str.removesuffix("_cents")
st.altair_chart(
    alt.Chart(flows, title="Contributions in, hits out, per casino day")
    .mark_bar()
    .encode(
        x=alt.X("yearmonthdate(gaming_date):O", title=None),
        xOffset="flow:N",
        y="S/:Q",
        color="flow:N",
        tooltip=["gaming_date:T", "flow:N", "S/:Q"],
    ),
    width="stretch",
)
st.subheader("Per table")
ui.table(tables, name="progressive_by_table")
st.subheader("Hits")
ui.table(data.progressive_hits(f), name="progressive_hits")
