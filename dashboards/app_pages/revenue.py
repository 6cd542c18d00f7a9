"""Revenue: handle, house result, commission and theoretical win with its 95 % band, hold,
pace and table accounting (DEF-ACC1, DEF-ACC2) for any days, games, tables, dealers, shifts."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboards import data, ui

ui.require("revenue")
st.title("Revenue")
options = ui.options_or_stop()
f = ui.filters(options, page="revenue")
ui.build_caption()

BREAKDOWNS: dict[str, data.Breakdown] = {
    "game": "game", "table": "table", "dealer": "dealer", "shift": "shift", "spot": "spot"
}  # fmt: skip
by = BREAKDOWNS[
    st.sidebar.segmented_control(
        "Break down by", list(BREAKDOWNS), default="game", key="revenue_by", required=True
    )
    or "game"
]
by_time: data.Breakdown = "hour" if (f.end - f.start).days < 3 else "day"
views = data.revenue_sets(f, ("all", by_time, by))
total, trend, breakdown = views["all"], views[by_time], views[by]
if total.empty:
    st.info("No settled bets match these filters.")
    st.stop()
t = total.iloc[0]

row = st.columns(5)
row[0].metric("Handle", ui.money(t["handle_cents"]), border=True, help="Σ wagers.")
row[1].metric(
    "House result",
    ui.money(t["house_result_cents"]),
    border=True,
    help="Wagers lost − winnings paid + commission (= − Σ net to players).",
)
row[2].metric("Commission", ui.money(t["commission_cents"]), border=True, help="PGP-A17c, DEF-M2.")
row[3].metric(
    "Theoretical win",
    ui.money(t["theoretical_win_cents"]),
    border=True,
    help="Σ wager × the profile's house edge for that wager (DEF-ACC2).",
)
row[4].metric(
    "Hold",
    ui.pct(t["hold_pct"]),
    delta=f"{(t['hold_pct'] - t['theoretical_hold_pct']) * 100:+.2f} pts"
    if pd.notna(t["hold_pct"]) and pd.notna(t["theoretical_hold_pct"])
    else None,
    border=True,
    help="House result / handle, against theoretical win / handle.",
)
row = st.columns(5)
row[0].metric("Rounds", f"{int(t['rounds']):,}", border=True)
row[1].metric(
    "Rounds per hour",
    "–" if pd.isna(t["rounds_per_hour"]) else f"{t['rounds_per_hour']:.1f}",
    border=True,
    help="Rounds / hours in play (pauses over 5 minutes are breaks).",
)
row[2].metric("Average bet", ui.money(t["average_bet_cents"]), border=True)
row[3].metric("Players", f"{int(t['players']):,}", border=True)
row[4].metric(
    "Capped by the payout limit",
    ui.money(t["capped_cents"]),
    border=True,
    help=f"{int(t['capped_payouts'])} payouts cut by the table's cap (THP-A2c, DEF-THP5).",
)

if pd.notna(t["sd_cents"]):
    inside = t["band_low_cents"] <= t["band_observed_cents"] <= t["band_high_cents"]
    message = (
        f"Players' positions: house result {ui.money(t['band_observed_cents'])} against "
        f"{ui.money(t['band_expected_cents'])} expected given the players' cards and "
        "decisions; 95 % of fair results fall between "
        f"{ui.money(t['band_low_cents'])} and {ui.money(t['band_high_cents'])} "
        f"(z = {t['z']:.2f})."
    )
    (st.success if inside else st.warning)(
        message + (" Inside the band." if inside else " Outside the band: see Integrity."),
        icon=":material/check_circle:" if inside else ":material/warning:",
    )

st.subheader("Trend")
series = pd.DataFrame(
    {
        "when": trend["key"],
        "house result (S/)": trend["house_result_cents"] / 100,
        "theoretical win (S/)": trend["theoretical_win_cents"] / 100,
        "expected given the decisions (S/)": trend["band_expected_cents"] / 100,
        "band low (S/)": trend["band_low_cents"] / 100,
        "band high (S/)": trend["band_high_cents"] / 100,
        "handle (S/)": trend["handle_cents"] / 100,
    }
)
base = alt.Chart(series).encode(x=alt.X("when:T", title=f"{by_time} (UTC)"))
band = base.mark_area(opacity=0.2).encode(
    y=alt.Y("band low (S/):Q", title="S/"), y2="band high (S/):Q"
)
lines = (
    base.transform_fold(
        ["house result (S/)", "expected given the decisions (S/)", "theoretical win (S/)"],
        as_=["measure", "S/"],
    )
    .mark_line(point=True)
    .encode(
        y="S/:Q", color=alt.Color("measure:N", title=None), tooltip=["when:T", "measure:N", "S/:Q"]
    )
)
st.altair_chart(
    (band + lines).properties(
        title="House result vs expected given the players' decisions (95 % band), and the "
        "theoretical win of optimal play"
    ),
    width="stretch",
)
ui.table(trend.rename(columns={"key": by_time}), name=f"revenue_by_{by_time}")

st.subheader("Breakdown")
chart = pd.DataFrame(
    {
        by: breakdown["key"].astype(str),
        "house result (S/)": breakdown["house_result_cents"] / 100,
        "theoretical win (S/)": breakdown["theoretical_win_cents"] / 100,
        "expected given the decisions (S/)": breakdown["band_expected_cents"] / 100,
        "band low (S/)": breakdown["band_low_cents"] / 100,
        "band high (S/)": breakdown["band_high_cents"] / 100,
    }
)
axis = alt.X(f"{by}:N", sort=None, title=None, axis=alt.Axis(labelAngle=0))
bars = (
    alt.Chart(chart)
    .mark_bar()
    .encode(x=axis, y=alt.Y("house result (S/):Q", title="S/"), tooltip=list(chart.columns))
)
rules = (
    alt.Chart(chart)
    .mark_rule(color="gray")
    .encode(x=axis, y="band low (S/):Q", y2="band high (S/):Q")
)
ticks = (
    alt.Chart(chart)
    .mark_tick(color="black", thickness=3)
    .encode(x=axis, y="expected given the decisions (S/):Q")
)
st.altair_chart(
    (bars + rules + ticks).properties(
        title="House result (bars), expected given the players' decisions (tick) and its "
        "95 % band (line)"
    ),
    width="stretch",
)
ui.table(breakdown.rename(columns={"key": by}), name=f"revenue_by_{by}")

st.subheader("Table accounting")
st.caption(
    "DEF-ACC1: win = closing inventory + credits + drop − opening inventory − fills; "
    "hold = win / drop, over the chip-tray sessions opened in these days (dealer and shift "
    "filters do not apply: the tray is counted per table)."
)
accounting = data.table_accounting(f)
totals = data.accounting_totals(accounting)
drop, win, hold = st.columns(3)
drop.metric("Drop", ui.money(totals.drop_cents), border=True)
win.metric("Win", ui.money(totals.win_cents), border=True, help="Closed sessions only.")
hold.metric("Hold (win / drop)", ui.pct(totals.hold_pct), border=True)
ui.table(accounting, name="table_accounting")

st.subheader("What if")
st.caption(
    "The recorded rounds re-settled under another rule profile (`croupier what-if`), with the "
    "cards as dealt and, unless the decisions say strategy, the players' decisions as played: "
    "the difference is then the cost of the paytables and forfeit rules with those decisions "
    "fixed. Kept per casino day and table: the date, game and table filters apply, the "
    "dealer and shift filters do not."
)
comparison = data.what_if(f)
if comparison is None:
    st.info(
        f"No what-if comparison is stored. Run `{data.WHAT_IF_COMMAND}` (any profile, see "
        "`croupier what-if --help`) to compute one and build it into the marts."
    )
elif comparison.empty:
    st.info("The stored what-if comparisons have no rounds in these filters.")
else:
    for _, w in comparison.iterrows():
        st.markdown(
            f"**{ui.plain(w['game'])}**: recorded under {ui.plain(w['recorded_profiles'])}, "
            f"re-settled under **{ui.plain(w['whatif_profile'])}** "
            f"(decisions {ui.plain(w['decisions'])}; {int(w['rounds']):,} rounds, casino days "
            f"{pd.Timestamp(w['first_day']).date()} to {pd.Timestamp(w['last_day']).date()})"
        )
        cells = st.columns(4)
        cells[0].metric("Handle recorded", ui.money(w["handle_cents"]), border=True)
        cells[1].metric(
            "House result recorded",
            ui.money(w["house_result_cents"]),
            border=True,
            help=f"Hold {ui.pct(w['hold_pct'])}.",
        )
        cells[2].metric(
            "House result re-settled",
            ui.money(w["whatif_house_result_cents"]),
            delta=ui.money(w["difference_cents"]),
            border=True,
            help=f"Hold {ui.pct(w['whatif_hold_pct'])}; the delta is re-settled − recorded.",
        )
        cells[3].metric(
            "Hold: recorded → re-settled",
            f"{ui.pct(w['hold_pct'])} → {ui.pct(w['whatif_hold_pct'])}",
            border=True,
        )
    ui.table(comparison, name="what_if")
