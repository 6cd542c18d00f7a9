"""Players: who decides as if they saw the dealer's hidden cards (hole-carding), with the
decisions that say so, the dealers it happened under, and a drill-down to each round; and who
plays the legitimate optimum (advantage players: legal, worth knowing)."""

from __future__ import annotations

import streamlit as st

from dashboards import data, ui

ui.require("players")
st.title("Players")
options = ui.options_or_stop()
games = tuple(
    st.sidebar.multiselect(
        "Game",
        [g for g in options.games if g in ("tripoker", "holdem")],
        format_func=lambda g: options.games[g],
        key="players_games",
    )
)
ui.build_caption()
st.caption(
    "Each play/call/fold decision is set beside the best choice from what the player may see "
    "and the best knowing the dealer's hidden cards. Where the two can differ, a player who "
    "cannot see those cards takes the second with a known probability, whatever their "
    "strategy; a player flagged here took it far more often than that allows (exact "
    "Poisson-binomial test, Benjamini-Hochberg over every player at 1 %). See "
    "docs/advantage-play.md."
)

flagged = data.flagged_players(games)
if flagged.empty:
    st.success("No player's decisions are improbable for someone who cannot see the hidden cards.")
else:
    st.subheader(f"Flagged players ({len(flagged)})")
    ui.table(
        flagged,
        name="flagged_players",
        labels={
            "observed": "matches",
            "tested_decisions": "decisions that can tell",
            "informative_taken_rate": "full-information choice taken (informative)",
            "flagged_with_dealers": "flagged under dealers",
        },
    )
    pick = st.selectbox(
        "Player",
        range(len(flagged)),
        format_func=lambda i: (
            f"{flagged['player_ref'].iat[i]} · "
            f"{options.games.get(flagged['game'].iat[i], flagged['game'].iat[i])}"
        ),
        key="players_pick",
    )
    row = flagged.iloc[pick]
    player, game = str(row["player_ref"]), str(row["game"])
    st.subheader(f"{ui.plain(player)}: by dealer")
    ui.table(data.player_dealers(player, game), name=f"dealers_{player}_{game}")
    decisions = data.informative_decisions(player, game)
    st.subheader(f"{ui.plain(player)}: informative decisions ({len(decisions)})")
    ui.table(decisions, name=f"decisions_{player}_{game}")
    if not decisions.empty:
        round_id = st.selectbox("Round", list(decisions["round_id"]), key="players_round")
        if st.button("Open in the Round explorer", key="players_open"):
            st.switch_page("app_pages/round_explorer.py", query_params={"round": round_id})

advantage = data.advantage_players(games)
st.subheader("Players who play the legitimate optimum")
if advantage.empty:
    st.caption("None with enough decisions.")
else:
    st.caption(
        "At least 97 % of their decisions equal the best choice from what they may see (with "
        "an exposed dealer card, the exposed-card strategy): legal advantage play."
    )
    ui.table(advantage, name="advantage_players")
