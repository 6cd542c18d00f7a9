"""Every query the dashboards run, as typed functions over the marts (and, for a round's events,
the lake), with parameterized SQL only: user input reaches DuckDB as parameters, never as text.

One read-only DuckDB instance per published build of a marts store is kept (attaching DuckLake
costs ~0.3 s), the marts attached pinned at the snapshot that build published
(`<marts>/published.json`, infra/marts.py): the pages show the last successful build,
whole, never a build half done or one that failed. Each query runs on a fresh cursor of its own,
closed at once.

What a frame carries depends on who reads it (`viewer`): the measures the reader's role lacks
(dashboards/roles.toml; for surveillance, money) are taken out of every frame here, after the
shared cache and before any page sees it — columns and JSON fields ending in `_cents`, and the
amounts statistical alerts compare (their explanations then speak in standard deviations).

This package is that door: the store and its connection, the cached query (`_frame`, the one
way a frame is read, through `redact`), `viewer`/`viewing_as`, `Filters` and the filter
helpers. The queries live by page area (floor, revenue, integrity, dealers, progressive,
rounds), what the pages say in words in `prose`; every public name is re-exported here, so
pages use `from dashboards import data` and `data.<name>`.
"""

from __future__ import annotations

import streamlit as st

from dashboards.data.core import (
    CHART_POINTS,
    COUNTING_TESTS,
    LIVE_TTL_SECONDS,
    MAX_SEARCH,
    TTL_SECONDS,
    Z_95,
    BuildInfo,
    FilterOptions,
    Filters,
    LakeAway,
    NoMarts,
    Store,
    Version,
    build_info,
    current_store,
    filter_options,
    lake_snapshot,
    redact,
    viewer,
    viewing_as,
)
from dashboards.data.dealers import dealer_scorecards
from dashboards.data.floor import FloorView, floor
from dashboards.data.integrity import (
    LIVE_LIMIT,
    WITHHELD_NOTE,
    IntegritySummary,
    LiveViolations,
    ViolationBreakdown,
    alert_key,
    audit_trail,
    house_way,
    integrity_summary,
    live_critical_violations,
    open_alert_choices,
    payout_accuracy,
    statistical_alerts,
    violations_by,
    violations_detail,
)
from dashboards.data.players import (
    advantage_players,
    flagged_players,
    informative_decisions,
    player_dealers,
)
from dashboards.data.progressive import (
    meter_series,
    progressive_daily,
    progressive_hits,
    progressive_tables,
)
from dashboards.data.prose import cards_of, event_details, explain, pretty_cards
from dashboards.data.revenue import (
    WHAT_IF_COMMAND,
    AccountingTotals,
    Breakdown,
    accounting_totals,
    revenue,
    revenue_sets,
    table_accounting,
    what_if,
)
from dashboards.data.rounds import Round, clean_search, round_detail, rounds_near

__all__ = [
    "CHART_POINTS",
    "COUNTING_TESTS",
    "LIVE_LIMIT",
    "LIVE_TTL_SECONDS",
    "MAX_SEARCH",
    "TTL_SECONDS",
    "WHAT_IF_COMMAND",
    "WITHHELD_NOTE",
    "Z_95",
    "AccountingTotals",
    "Breakdown",
    "BuildInfo",
    "FilterOptions",
    "Filters",
    "FloorView",
    "IntegritySummary",
    "LakeAway",
    "LiveViolations",
    "NoMarts",
    "Round",
    "Store",
    "Version",
    "ViolationBreakdown",
    "accounting_totals",
    "advantage_players",
    "alert_key",
    "audit_trail",
    "build_info",
    "cards_of",
    "clean_search",
    "current_store",
    "dealer_scorecards",
    "event_details",
    "explain",
    "filter_options",
    "flagged_players",
    "floor",
    "house_way",
    "informative_decisions",
    "integrity_summary",
    "lake_snapshot",
    "live_critical_violations",
    "meter_series",
    "open_alert_choices",
    "payout_accuracy",
    "player_dealers",
    "pretty_cards",
    "progressive_daily",
    "progressive_hits",
    "progressive_tables",
    "redact",
    "revenue",
    "revenue_sets",
    "round_detail",
    "rounds_near",
    "st",
    "statistical_alerts",
    "table_accounting",
    "viewer",
    "viewing_as",
    "violations_by",
    "violations_detail",
    "what_if",
]
