"""The dashboards' queries on a demo night: their numbers equal the marts' own aggregates and
the lake's settlements for the same filters, and hostile input is only ever a parameter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboards import acks, auth, data

HOSTILE = [
    "' OR 1=1 --",
    "'; DROP TABLE fct_bets; --",
    '" OR "1"="1',
    "PG-01') UNION SELECT * FROM fct_bets --",
    "x" * 10_000,
]


def _days(marts: duckdb.DuckDBPyConnection) -> tuple[date, date]:
    row = marts.execute("SELECT min(gaming_date), max(gaming_date) FROM fct_rounds").fetchone()
    assert row is not None
    return row[0], row[1]


@pytest.fixture(autouse=True)
def as_manager() -> Iterator[None]:
    """These tests read as a manager (every measure); surveillance's view is tested apart."""
    with data.viewing_as(auth.GRANTS[auth.Role.MANAGER]):
        yield


@pytest.fixture
def everything(dashboard_env: Path, marts: duckdb.DuckDBPyConnection) -> data.Filters:
    start, end = _days(marts)
    return data.Filters(start=start, end=end)


def _agg(marts: duckdb.DuckDBPyConnection, sql: str, params: list[object]) -> pd.DataFrame:
    return marts.execute(sql, params).df()


def test_def_acc2_revenue_by_game_equals_the_revenue_mart(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    mine = data.revenue(everything, "game").set_index("key")
    theirs = _agg(
        marts,
        "SELECT dimension_value AS key, sum(handle_cents) AS handle_cents, "
        "sum(house_result_cents) AS house_result_cents, sum(commission_cents) AS commission_cents,"
        " sum(payout_cents) AS payout_cents, sum(capped_cents) AS capped_cents, "
        "sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents, sum(rounds) AS rounds, "
        "sum(wagers) AS wagers, sum(bet_lines) AS bet_lines "
        "FROM marts.main.agg_revenue WHERE period = 'day' AND dimension = 'game' "
        "AND gaming_date BETWEEN ? AND ? GROUP BY 1",
        [everything.start, everything.end],
    ).set_index("key")
    assert sorted(mine.index) == sorted(theirs.index) == ["holdem", "pai_gow", "tripoker"]
    for column in ("handle_cents", "house_result_cents", "commission_cents", "payout_cents",
                   "capped_cents", "rounds", "wagers", "bet_lines"):  # fmt: skip
        assert mine[column].astype(int).to_dict() == theirs[column].astype(int).to_dict(), column
    assert mine["theoretical_win_cents"].to_dict() == pytest.approx(
        theirs["theoretical_win_cents"].to_dict(), abs=1e-6
    )


def test_revenue_by_table_and_shift_equals_the_marts_per_shift_rows(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    theirs = _agg(
        marts,
        "SELECT gaming_date, shift_no, dimension_value AS table_id, handle_cents, "
        "house_result_cents, rounds, players, hours_in_play, rounds_per_hour, average_bet_cents "
        "FROM marts.main.agg_revenue WHERE period = 'shift' AND dimension = 'table'",
        [],
    )
    assert len(theirs) >= 3
    for row in theirs.to_dict("records"):
        day = (
            row["gaming_date"].date() if hasattr(row["gaming_date"], "date") else row["gaming_date"]
        )
        f = data.Filters(
            start=day, end=day, tables=(row["table_id"],), shifts=(int(row["shift_no"]),)
        )
        mine = data.revenue(f, "all").iloc[0]
        assert int(mine["handle_cents"]) == row["handle_cents"]
        assert int(mine["house_result_cents"]) == row["house_result_cents"]
        assert (int(mine["rounds"]), int(mine["players"])) == (row["rounds"], row["players"])
        assert mine["hours_in_play"] == pytest.approx(row["hours_in_play"])
        assert mine["rounds_per_hour"] == pytest.approx(row["rounds_per_hour"])
        assert mine["average_bet_cents"] == pytest.approx(row["average_bet_cents"])


def test_revenue_totals_equal_the_lakes_settlements(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    """Independent of dbt: the consumer's settlements in the lake, summed here."""
    lake = marts.execute(
        "SELECT sum(wager_cents), sum(house_result_cents), sum(commission_cents), "
        "-sum(net_cents), count(DISTINCT round_id) FROM lake.main.settlements"
    ).fetchone()
    assert lake is not None
    mine = data.revenue(everything, "all").iloc[0]
    handle, house, commission, minus_net, rounds = (int(x) for x in lake)
    assert int(mine["handle_cents"]) == handle
    assert int(mine["house_result_cents"]) == house == minus_net  # platform.md identity
    assert int(mine["commission_cents"]) == commission
    assert int(mine["rounds"]) == rounds


def test_revenue_by_spot_adds_up_to_the_whole(everything: data.Filters) -> None:
    spots = data.revenue(everything, "spot")
    whole = data.revenue(everything, "all").iloc[0]
    assert {"ante", "main", "play"} <= set(spots["key"])
    for column in ("handle_cents", "house_result_cents", "commission_cents", "bet_lines"):
        assert int(spots[column].sum()) == int(whole[column]), column


def test_a_game_filter_changes_the_numbers_to_that_games(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    holdem = data.revenue(
        data.Filters(start=everything.start, end=everything.end, games=("holdem",)), "all"
    ).iloc[0]
    whole = data.revenue(everything, "all").iloc[0]
    lake = marts.execute(
        "SELECT sum(wager_cents) FROM lake.main.settlements WHERE game = 'holdem'"
    ).fetchone()
    assert lake is not None
    assert int(holdem["handle_cents"]) == int(lake[0]) < int(whole["handle_cents"])


def test_def_acc2_band_per_table_day_equals_the_hold_alert_mart(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    theirs = _agg(
        marts,
        "SELECT subject_id, gaming_date, interval_low, interval_high, z_score "
        "FROM marts.main.stat_hold_vs_theoretical "
        "WHERE subject_type = 'table' AND shift_no IS NULL",
        [],
    )
    assert len(theirs) >= 3
    for row in theirs.to_dict("records"):
        day = pd.Timestamp(row["gaming_date"]).date()
        mine = data.revenue(data.Filters(start=day, end=day, tables=(row["subject_id"],)), "all")
        band = mine.iloc[0]
        # the mart rounds its interval to the hundredth of a céntimo
        assert band["band_low_cents"] == pytest.approx(row["interval_low"], abs=0.006)
        assert band["band_high_cents"] == pytest.approx(row["interval_high"], abs=0.006)
        assert band["z"] == pytest.approx(row["z_score"], abs=1e-6)


def test_def_acc1_table_accounting_win_from_its_counts(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    accounting = data.table_accounting(everything)
    closed = accounting[accounting["closed_sessions"] == accounting["sessions"]]
    assert len(closed) >= 1
    for row in closed.to_dict("records"):
        assert row["win_cents"] == (
            row["closing_inventory_cents"] + row["credits_cents"] + row["drop_cents"]
            - row["opening_inventory_cents"] - row["fills_cents"]
        )  # fmt: skip
        assert row["hold_pct"] == pytest.approx(row["win_cents"] / row["drop_cents"])
    daily = marts.execute(
        "SELECT sum(drop_cents), sum(win_cents) FROM marts.main.agg_table_accounting_daily"
    ).fetchone()
    totals = data.accounting_totals(accounting)
    assert daily is not None
    assert (totals.drop_cents, totals.win_cents) == (int(daily[0]), int(daily[1]))


def test_violations_by_rule_count_the_lakes_violations(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    lake = dict(
        marts.execute("SELECT rule_id, count(*) FROM lake.main.violations GROUP BY 1").fetchall()
    )
    mine = data.violations_by(everything, "rule")
    assert dict(zip(mine["key"], mine["violations"].astype(int), strict=True)) == lake
    assert all(text and not text.startswith("(no text") for text in mine["rule_text"])


def test_dealer_error_rate_is_violations_over_rounds(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    cards = data.dealer_scorecards(everything).set_index("dealer_id")
    rounds = dict(
        marts.execute("SELECT dealer_id, count(*) FROM lake.main.rounds GROUP BY 1").fetchall()
    )
    assert {d: int(n) for d, n in cards["rounds"].items()} == rounds
    for dealer, row in cards.iterrows():
        assert row["error_rate"] == pytest.approx(row["dealer_violations"] / row["rounds"]), dealer


def test_def_thp4_liability_is_each_tables_last_meter(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection
) -> None:
    last = dict(
        marts.execute(
            "SELECT table_id, arg_max(meter_after_cents, (occurred_at, entry_no)) "
            "FROM lake.main.jackpot_ledger GROUP BY 1"
        ).fetchall()
    )
    tables = data.progressive_tables(everything)
    assert dict(zip(tables["table_id"], tables["liability_cents"].astype(int), strict=True)) == last
    series = data.meter_series(everything)
    ends = series.groupby("table_id")["meter_cents"].last().astype(int).to_dict()
    assert ends == last


def test_round_detail_has_events_in_order_and_settlement_adding_up(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    row = marts.execute(
        "SELECT round_id FROM marts.main.fct_rounds WHERE game = 'pai_gow' AND status = 'settled'"
        " ORDER BY round_id LIMIT 1"
    ).fetchone()
    assert row is not None
    found = data.round_detail(row[0])
    assert found is not None
    seqs = list(found.events["seq"])
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    assert found.events["event_type"].iloc[0] == "round_started"
    assert int(found.bets["house_result_cents"].sum()) == found.header["settled_house_result_cents"]
    dealt = found.cards[found.cards["event_type"] == "cards_dealt"]
    assert len(dealt) == 8  # PGP-A10a: seven groups, and PGP-A10d: the four left over
    assert sum(len(c.split()) for c in dealt["cards"]) == 53  # PGP-A7a: the whole deck
    cited = {r for ids in found.bets["rule_ids"] for r in ids}
    assert cited <= set(found.rule_texts) and "PGP-A14a" in cited


def test_rounds_near_a_time_are_the_tables_nearest_first(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    row = marts.execute(
        "SELECT table_id, started_at FROM marts.main.fct_rounds "
        "ORDER BY started_at LIMIT 1 OFFSET 20"
    ).fetchone()
    assert row is not None
    near = data.rounds_near(row[0], row[1])
    gaps = (near["started_at"] - pd.Timestamp(row[1])).abs()
    assert gaps.iloc[0] == pd.Timedelta(0)
    assert list(gaps) == sorted(gaps) and gaps.max() <= pd.Timedelta(minutes=30)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_filter_values_match_nothing(
    everything: data.Filters, marts: duckdb.DuckDBPyConnection, hostile: str
) -> None:
    f = data.Filters(
        start=everything.start, end=everything.end, games=(hostile,), tables=(hostile,),
        dealers=(hostile,),
    )  # fmt: skip
    assert data.revenue(f, "all").empty
    assert data.violations_by(f, "rule").empty
    assert data.dealer_scorecards(f).empty
    assert data.round_detail(hostile) is None
    assert data.rounds_near(hostile, pd.Timestamp("2025-01-10T23:30Z").to_pydatetime()).empty
    count = marts.execute("SELECT count(*) FROM marts.main.fct_bets").fetchone()
    assert count is not None and count[0] > 0


@pytest.mark.parametrize(
    ("typed", "searched"),
    [("  PG-01-R00001 ", "PG-01-R00001"), ("", None), ("   ", None), ("x" * 101, None),
     ("x" * 100, "x" * 100)],
)  # fmt: skip
def test_round_search_is_trimmed_and_bounded(typed: str, searched: str | None) -> None:
    assert data.clean_search(typed) == searched


def test_acknowledged_violations_leave_the_open_alerts(
    everything: data.Filters, dashboard_env: Path
) -> None:
    detail = data.violations_detail(everything)
    alerts = data.statistical_alerts(everything)
    choices = data.open_alert_choices(detail, alerts)
    first = next(iter(choices))
    acks.acknowledge(
        data.current_store().acks, [data.alert_key(first)], user="sam", role="surveillance",
        note="checked",
    )  # fmt: skip
    after = data.open_alert_choices(
        data.violations_detail(everything), data.statistical_alerts(everything)
    )
    assert first not in after and len(after) == len(choices) - 1


def test_hold_alert_explained_with_its_band_and_odds() -> None:
    alert = (
        {
            "test_name": "hold_vs_theoretical", "subject_type": "table", "subject_id": "TP-02",
            "gaming_date": date(2025, 1, 10), "shift_no": 2, "observed": -958000.0,
            "expected": 46190.09, "interval_low": -812157.27, "interval_high": 904537.45,
            "z_score": -2.29, "p_value": 0.02,
        }
    )  # fmt: skip
    text = data.explain(alert, money=True)
    assert text.startswith("Table TP-02 on 2025-01-10, shift 2: the house kept S/ -9,580.00")
    assert "between S/ -8,121.57 and S/ 9,045.37" in text
    assert "less than chance explains" in text and "about 1 time in 50" in text
    # Without money: the same alert in standard deviations, no amount at all.
    text = data.explain(alert, money=False)
    assert "2.29 standard deviations below the expected result (z = -2.29)" in text
    assert "S/" not in text and "9,580" not in text and "less than chance explains" in text


def test_without_money_no_frame_carries_an_amount(everything: data.Filters) -> None:
    """The data layer itself takes money out for a role without it: no `_cents` column, no
    `_cents` field in evidence or event payloads, no amount in a statistical alert."""
    with data.viewing_as(auth.GRANTS[auth.Role.SURVEILLANCE]):
        frames = {
            "payouts": data.payout_accuracy(everything),
            "scorecards": data.dealer_scorecards(everything),
            "violations": data.violations_detail(everything),
            "alerts": data.statistical_alerts(everything),
            "revenue": data.revenue(everything, "game"),
        }
        rounds = [data.round_detail(r) for r in data.violations_detail(everything)["round_id"][:5]]
    assert all(r is not None for r in rounds)
    frames |= {f"round {i} {part}": getattr(r, part) for i, r in enumerate(rounds) if r
               for part in ("bets", "events", "violations")}  # fmt: skip
    for name, frame in frames.items():
        assert not [c for c in frame.columns if c.endswith("_cents")], name
        assert "_cents" not in frame.to_csv(), name
    alerts = frames["alerts"]
    money = alerts[~alerts["test_name"].isin(data.COUNTING_TESTS)]
    assert money[["observed", "expected", "interval_low", "interval_high"]].isna().all().all()
    # (a fair demo night may raise no statistical alert: the explanations without money are
    # tested on an alert of their own, test_hold_alert_explained_with_its_band_and_odds)
    assert not alerts["explanation"].astype("string").str.contains("S/").any()
    # The manager's frames do carry them (the check above can fail).
    assert "_cents" in data.violations_detail(everything).to_csv()
    assert "handle_cents" in data.dealer_scorecards(everything).columns


def test_cards_are_shown_with_suits_and_the_joker() -> None:
    assert data.pretty_cards(["As", "Td", "Jk", "2c", "Qh"]) == "A♠ 10♦ Joker 2♣ Q♥"


def test_several_breakdowns_in_one_scan_equal_each_alone(everything: data.Filters) -> None:
    together = data.revenue_sets(everything, ("all", "hour", "table", "shift", "spot"))
    for by, frame in together.items():
        alone = data.revenue(everything, by)
        pd.testing.assert_frame_equal(frame, alone, check_dtype=False)
    assert list(together["all"]["key"]) == ["all"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["amount_cents", "seat", "paid_cents", "x"]), inner, max_size=4
        )
    ),
    max_leaves=12,
)


def _money_keys(value: object) -> list[str]:
    if isinstance(value, dict):
        return [k for k in value if k.endswith("_cents")] + _money_keys(list(value.values()))
    if isinstance(value, list):
        return [k for v in value for k in _money_keys(v)]
    return []


@settings(max_examples=300, deadline=None)
@given(
    evidence=st.lists(st.one_of(st.text(max_size=40), _JSON.map(json.dumps)), max_size=5),
    tests=st.lists(st.text(max_size=12), max_size=5),
)
def test_redaction_of_any_evidence_and_alert_keeps_no_money(
    evidence: list[str], tests: list[str]
) -> None:
    """Whatever a violation's evidence holds (JSON of any shape, or not JSON) and whatever an
    alert's test is called, redaction raises nothing and leaves no `_cents` field or amount."""
    nothing = auth.Grant()
    shown = data.redact(
        pd.DataFrame({"evidence": evidence, "wager_cents": range(len(evidence))}), nothing
    )
    assert list(shown.columns) == ["evidence"]
    for value in shown["evidence"]:
        assert value == "(withheld)" or not _money_keys(json.loads(value))
    alerts = pd.DataFrame(
        {"test_name": tests, **{c: [1.5] * len(tests) for c in ("observed", "expected",
                                                                "interval_low", "interval_high")}}
    )  # fmt: skip
    blanked = data.redact(alerts, nothing)
    counting = blanked["test_name"].isin(data.COUNTING_TESTS)
    assert blanked.loc[~counting, "observed"].isna().all()
