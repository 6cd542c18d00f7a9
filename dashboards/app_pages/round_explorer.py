"""Round explorer: find a round by id, or by table and time, and see what settles a dispute:
its events in order, the cards, each bet's settlement and the rules that decided it."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import pandas as pd
import streamlit as st

from dashboards import data, ui

ui.require("round_explorer")
st.title("Round explorer")
options = ui.options_or_stop()

how = st.segmented_control(
    "Find a round", ["By round id", "By table and time"], default="By round id", key="find_by",
    required=True,
)  # fmt: skip
round_id: str | None = None
if how == "By table and time":
    cols = st.columns(3)
    table = cols[0].selectbox("Table", list(options.tables), key="find_table")
    day = cols[1].date_input(
        "Day (UTC)",
        value=options.last_day,
        min_value=options.first_day,
        max_value=options.last_day + pd.Timedelta(days=1),
        key="find_day",
    )
    at = cols[2].time_input("Time (UTC)", value=time(0, 0), key="find_time", step=60)
    if table and isinstance(day, date):
        near = data.rounds_near(table, datetime.combine(day, at, tzinfo=UTC))
        if near.empty:
            st.info("No round of this table started within 30 minutes of that time.")
        else:
            round_id = st.selectbox(
                "Rounds within 30 minutes, nearest first", list(near["round_id"]), key="find_near"
            )
else:
    linked = st.query_params.get("round")  # another page's link: ?round=<id>
    if linked and "find_round_id" not in st.session_state:
        st.session_state["find_round_id"] = data.clean_search(linked) or ""
    typed = st.text_input(
        "Round id", key="find_round_id", placeholder="e.g. PG-01-R00010", max_chars=data.MAX_SEARCH
    )
    if typed:
        round_id = data.clean_search(typed)
        if round_id is None:
            st.warning(f"Enter a round id of 1 to {data.MAX_SEARCH} characters.")

if round_id is None:
    st.stop()
found = data.round_detail(round_id)
if found is None:
    st.info("No round with this id:")
    st.code(round_id, language=None)
    st.stop()

h = found.header
st.subheader(f"{ui.plain(h['round_id'])} · {ui.plain(h['game'])} at {ui.plain(h['table_id'])}")
# The round's money only when the data layer gave it (a role without money gets none).
figures = [("Status", str(h["status"])), ("Dealer", str(h["dealer_id"]))]
if "handle_cents" in h:
    figures += [
        ("Handle", ui.money(h["handle_cents"])),
        ("House result", ui.money(h["settled_house_result_cents"])),
    ]
else:
    figures.append(("Bets", f"{len(found.bets):,}"))
figures.append(("Violations", f"{int(h['violations'] or 0)}"))
for column, (label, value) in zip(st.columns(len(figures)), figures, strict=True):
    column.metric(label, value, border=True)
ended = "–" if pd.isna(h["ended_at"]) else f"{pd.Timestamp(h['ended_at']):%H:%M:%S}"
details = [
    f"deck {h['deck_id']}",
    f"shuffler {h['shuffler']}",
    f"rule profile {h['profile']} v{h['profile_version']}",
    *([str(h["status_reason"])] if pd.notna(h["status_reason"]) and h["status_reason"] else []),
]
st.caption(
    f"Started {pd.Timestamp(h['started_at']):%Y-%m-%d %H:%M:%S} UTC, ended {ended} · "
    + " · ".join(ui.plain(d) for d in details)
)

st.subheader("Cards")
if found.cards.empty:
    st.caption("No card events for this round in the lake.")
else:
    ui.table(found.cards, name=f"cards_{h['round_id']}")

st.subheader("Settlement")
bets = found.bets.assign(rule_ids=[", ".join(ids) for ids in found.bets["rule_ids"]])
ui.table(bets, name=f"settlement_{h['round_id']}")

st.subheader("Rules cited")
ui.table(
    pd.DataFrame({"rule_id": list(found.rule_texts), "text": list(found.rule_texts.values())}),
    name=f"rules_{h['round_id']}",
)

if not found.violations.empty:
    st.subheader("Violations")
    ui.table(found.violations, name=f"violations_{h['round_id']}")

st.subheader("Events, in sequence order")
ui.table(found.events, name=f"events_{h['round_id']}")
