"""The marts' numbers recomputed independently from the lake with pandas and plain Python.

One real night (tests/dbt/conftest.py) is built with `dbt build`; each test reads the lake's raw
tables and event payloads itself and must land on the marts' figures.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.dbt.conftest import BuiltNight

SEEDS = Path(__file__).resolve().parents[2] / "dbt_project" / "seeds"
LIMA = "America/Lima"
DAY_STARTS_AT_HOUR = 6
SHIFT_HOURS = 8
MAX_GAP_SECONDS = 300


def lake_df(night: BuiltNight, sql: str) -> pd.DataFrame:
    con = night.lake_con()
    try:
        return con.execute(sql).df()
    finally:
        con.close()


def marts_df(night: BuiltNight, sql: str) -> pd.DataFrame:
    con = night.marts_con()
    try:
        return con.execute(sql).df()
    finally:
        con.close()


def casino_day(ts: pd.Series) -> pd.Series:
    local = ts.dt.tz_convert(LIMA).dt.tz_localize(None) - pd.Timedelta(hours=DAY_STARTS_AT_HOUR)
    return local.dt.date


def casino_shift(ts: pd.Series) -> pd.Series:
    local = ts.dt.tz_convert(LIMA).dt.tz_localize(None) - pd.Timedelta(hours=DAY_STARTS_AT_HOUR)
    return (local.dt.hour // SHIFT_HOURS + 1).astype(int)


def payloads(night: BuiltNight, *types: str) -> pd.DataFrame:
    quoted = ", ".join(f"'{t}'" for t in types)
    frame = lake_df(
        night,
        f"SELECT event_type, table_id, round_id, seq, occurred_at, payload FROM events "
        f"WHERE event_type IN ({quoted}) ORDER BY table_id, seq",
    )
    frame["body"] = frame["payload"].map(json.loads)
    return frame


@pytest.fixture(scope="module")
def settlements(built_night: BuiltNight) -> pd.DataFrame:
    frame = lake_df(built_night, "SELECT * FROM settlements")
    edges = pd.read_csv(SEEDS / "house_edges.csv")[["profile", "profile_version", "spot",
                                                     "house_edge"]]  # fmt: skip
    frame = frame.merge(edges, on=["profile", "profile_version", "spot"], how="left")
    frame["theoretical"] = frame["wager_cents"] * frame["house_edge"]
    frame["gaming_date"] = casino_day(frame["settled_at"])
    frame["shift_no"] = casino_shift(frame["settled_at"])
    return frame


def test_dbt_build_ran_every_model_and_test_and_all_passed(built_night: BuiltNight) -> None:
    results = json.loads((built_night.marts / "_dbt" / "target" / "run_results.json").read_text())[
        "results"
    ]
    kinds = Counter(r["unique_id"].split(".")[0] for r in results)
    assert {r["status"] for r in results} <= {"success", "pass"}
    assert kinds["unit_test"] == 3
    assert kinds["test"] >= 60
    # each model's and seed's row-level checks (foreign keys and row expressions included) run
    # as its one row_contract test; beside them, the singular tests, the one foreign key to a
    # column of another name, and the one check that only warns
    names = {r["unique_id"].split(".")[2] for r in results}
    contracts = {name for name in names if name.startswith("row_contract_")}
    assert len(contracts) >= 45
    generic = {n for n in names if n.startswith(("relationships_", "expression_is_true_"))}
    assert generic == {
        "relationships_dim_games_default_profile__profile__ref_dim_profiles_",
        "expression_is_true_fct_bets_house_edge_is_not_null",
    }
    assert kinds["model"] >= 35


def test_def_acc2_revenue_by_game_and_day_equals_pandas(
    built_night: BuiltNight, settlements: pd.DataFrame
) -> None:
    players = settlements[settlements["bettor"] == "player"]
    expected = settlements.groupby(["gaming_date", "game"]).agg(
        bet_lines=("round_id", "size"),
        rounds=("round_id", "nunique"),
        handle_cents=("wager_cents", "sum"),
        house_result_cents=("house_result_cents", "sum"),
        commission_cents=("commission_cents", "sum"),
        payout_cents=("payout_cents", "sum"),
        theoretical=("theoretical", "sum"),
    )
    expected["players"] = players.groupby(["gaming_date", "game"])["player_ref"].nunique()
    mart = marts_df(
        built_night,
        "SELECT gaming_date, dimension_value AS game, bet_lines, rounds, players, handle_cents, "
        "house_result_cents, commission_cents, payout_cents, theoretical_win_cents, hold_pct "
        "FROM agg_revenue WHERE period = 'day' AND dimension = 'game'",
    )
    mart["gaming_date"] = pd.to_datetime(mart["gaming_date"]).dt.date
    mart = mart.set_index(["gaming_date", "game"]).sort_index()
    expected = expected.sort_index()
    assert list(mart.index) == list(expected.index)
    for column in ("bet_lines", "rounds", "players", "handle_cents", "house_result_cents",
                   "commission_cents", "payout_cents"):  # fmt: skip
        assert mart[column].astype(int).tolist() == expected[column].astype(int).tolist(), column
    # each line's theoretical win is rounded to 1e-6 céntimo: a sum is off by at most half that
    # per line
    theo = mart["theoretical_win_cents"].map(float).to_numpy()
    bound = expected["bet_lines"].to_numpy() * 0.5e-6 + 1e-6
    assert (np.abs(theo - expected["theoretical"].to_numpy()) <= bound).all()
    assert np.allclose(
        mart["hold_pct"], expected["house_result_cents"] / expected["handle_cents"], rtol=1e-12
    )


def test_revenue_per_shift_and_table_and_rounds_per_hour_equal_pandas(
    built_night: BuiltNight, settlements: pd.DataFrame
) -> None:
    rounds = lake_df(built_night, "SELECT * FROM rounds").sort_values(["table_id", "started_at"])
    # the previous round at the table that ended (a round that never ended has no end)
    previous_end = rounds.groupby("table_id")["ended_at"].transform(lambda s: s.shift().ffill())
    gap = (rounds["started_at"] - previous_end).dt.total_seconds().clip(0, MAX_GAP_SECONDS)
    duration = (rounds["ended_at"] - rounds["started_at"]).dt.total_seconds()
    rounds["seconds"] = duration + gap.fillna(0)
    played = rounds[rounds["round_id"].isin(settlements["round_id"])].copy()
    played["gaming_date"] = casino_day(played["ended_at"])
    played["shift_no"] = casino_shift(played["ended_at"])
    per_shift = settlements.groupby(["gaming_date", "shift_no", "table_id"]).agg(
        handle_cents=("wager_cents", "sum"), house_result_cents=("house_result_cents", "sum")
    )
    timing = played.groupby(["gaming_date", "shift_no", "table_id"]).agg(
        rounds=("round_id", "size"), seconds=("seconds", "sum")
    )
    expected = per_shift.join(timing)
    expected["rounds_per_hour"] = expected["rounds"] / (expected["seconds"] / 3600)
    mart = marts_df(
        built_night,
        "SELECT gaming_date, shift_no, dimension_value AS table_id, handle_cents, "
        "house_result_cents, rounds, rounds_per_hour FROM agg_revenue "
        "WHERE period = 'shift' AND dimension = 'table'",
    )
    mart["gaming_date"] = pd.to_datetime(mart["gaming_date"]).dt.date
    mart = mart.set_index(["gaming_date", "shift_no", "table_id"]).sort_index()
    expected = expected.sort_index()
    assert list(mart.index) == list(expected.index)
    assert mart["handle_cents"].tolist() == expected["handle_cents"].tolist()
    assert mart["house_result_cents"].tolist() == expected["house_result_cents"].tolist()
    assert mart["rounds"].tolist() == expected["rounds"].tolist()
    assert np.allclose(mart["rounds_per_hour"], expected["rounds_per_hour"], rtol=1e-9)


def test_def_acc1_table_accounting_equals_the_tray_events(built_night: BuiltNight) -> None:
    events = payloads(
        built_night, "inventory_counted", "fill_recorded", "credit_recorded", "drop_recorded"
    )
    books: dict[str, dict[str, int]] = {}
    for row in events.itertuples():
        book = books.setdefault(row.table_id, Counter())
        body = row.body
        if row.event_type == "inventory_counted":
            value = sum(c["denomination_cents"] * c["count"] for c in body["chips"])
            book[body["kind"]] = value
        else:
            book[row.event_type] += body["amount_cents"]
    mart = marts_df(
        built_night,
        "SELECT table_id, opening_inventory_cents, closing_inventory_cents, fills_cents, "
        "credits_cents, drop_cents, win_cents, hold_pct FROM fct_table_sessions",
    ).set_index("table_id")
    assert sorted(mart.index) == sorted(books)
    for table, book in books.items():
        win = (book["closing"] + book["credit_recorded"] + book["drop_recorded"]
               - book["opening"] - book["fill_recorded"])  # fmt: skip
        row = mart.loc[table]
        assert int(row["opening_inventory_cents"]) == book["opening"]
        assert int(row["closing_inventory_cents"]) == book["closing"]
        assert int(row["fills_cents"]) == book["fill_recorded"]
        assert int(row["drop_cents"]) == book["drop_recorded"]
        assert int(row["win_cents"]) == win
        assert row["hold_pct"] == pytest.approx(win / book["drop_recorded"], rel=1e-12)


def chi_square_sf_even(x: float, df: int) -> float:
    """P(chi2_df > x) for even df: exp(-x/2) Σ_{k < df/2} (x/2)^k / k!."""
    half = x / 2
    return math.exp(-half) * sum(half**k / math.factorial(k) for k in range(df // 2))


def chi_square_sf_odd(x: float, df: int) -> float:
    """P(chi2_df > x) for odd df, through the normal tail (math.erfc)."""
    root = math.sqrt(x)
    tail = math.erfc(root / math.sqrt(2))
    term, total = root, 0.0
    for j in range(1, (df - 1) // 2 + 1):
        total += term
        term *= x / (2 * j + 1)
    return tail + math.sqrt(2 / math.pi) * math.exp(-x / 2) * total


def five_significant(x: float) -> float:
    return 0.0 if x == 0 else round(x, 4 - math.floor(math.log10(abs(x))))


def test_pgp_a11b_dice_fit_equals_python_and_flags_the_loaded_dice(
    built_night: BuiltNight,
) -> None:
    rolls = payloads(built_night, "dice_rolled")
    rolls = rolls[rolls["body"].map(lambda b: b["valid"])]
    ways = [0] * 7
    for a in range(1, 7):
        for b in range(1, 7):
            for c in range(1, 7):
                ways[(a + b + c - 1) % 7] += 1
    assert ways == [31, 31, 31, 31, 31, 31, 30]
    mart = marts_df(built_night, "SELECT * FROM stat_dice_fit").set_index(
        ["test_name", "subject_id"]
    )
    loaded = {f["table_id"] for f in built_night.faults if f["fault"] == "biased_dice"}
    assert loaded == {"PG-02"}
    for table, group in rolls.groupby("table_id"):
        dice = np.array(group["body"].map(lambda b: b["dice"]).tolist())
        n = len(dice)
        positions = np.bincount((dice.sum(axis=1) - 1) % 7, minlength=7)
        expected = n * np.array(ways) / 216
        chi2 = float(((positions - expected) ** 2 / expected).sum())
        faces = np.bincount(dice.ravel(), minlength=7)[1:]
        chi2_faces = float(((faces - 3 * n / 6) ** 2 / (3 * n / 6)).sum())
        pos_row = mart.loc[("dice_positions", table)]
        face_row = mart.loc[("dice_faces", table)]
        assert pos_row["sample_size"] == n
        assert pos_row["statistic"] == pytest.approx(round(chi2, 6), abs=1e-9)
        assert pos_row["p_value"] == pytest.approx(five_significant(chi_square_sf_even(chi2, 6)))
        assert face_row["statistic"] == pytest.approx(round(chi2_faces, 6), abs=1e-9)
        p_faces = chi_square_sf_odd(chi2_faces, 5)
        assert face_row["p_value"] == pytest.approx(five_significant(p_faces), rel=1e-4)
        if table in loaded:  # a six a quarter of the time: the faces test must see it
            assert face_row["is_alert"] and p_faces < 1e-4
        else:
            assert p_faces > 1e-3


def test_card_rank_chi_square_per_deck_equals_python(built_night: BuiltNight) -> None:
    cards = payloads(built_night, "cards_dealt", "community_dealt")
    decks = lake_df(built_night, "SELECT round_id, deck_id FROM rounds")
    cards = cards.merge(decks, on="round_id")
    counts: dict[str, Counter[str]] = {}
    for row in cards.itertuples():
        for card in row.body["cards"]:
            if card != "Jk":
                counts.setdefault(row.deck_id, Counter())[card[0]] += 1
    mart = marts_df(
        built_night,
        "SELECT subject_id, sample_size, statistic FROM stat_card_rank_frequency "
        "WHERE test_name = 'card_ranks' AND subject_type = 'deck'",
    ).set_index("subject_id")
    tested = {deck: c for deck, c in counts.items() if sum(c.values()) / 13 >= 5}
    assert sorted(mart.index) == sorted(tested)
    for deck, ranks in tested.items():
        n = sum(ranks.values())
        chi2 = sum((ranks[r] - n / 13) ** 2 / (n / 13) for r in "23456789TJQKA")
        assert mart.loc[deck, "sample_size"] == n
        assert mart.loc[deck, "statistic"] == pytest.approx(round(chi2, 6), abs=1e-9)


@pytest.mark.parametrize("mart", ["stat_card_rank_frequency", "stat_dice_fit"])
def test_tied_chi_squares_get_their_bh_bounds_in_alert_order(
    built_night: BuiltNight, mart: str
) -> None:
    """A deck and the shuffler that dealt only it count the same cards, so their chi-squares
    are one number and their p-values tie; Benjamini-Hochberg then ranks tied rows by their
    alert_id, so every build of the lake shows the same bound for each. (Summed as doubles in
    whatever order DuckDB's threads met the cells, the two chi-squares differed in their last
    bits and the two bounds swapped between builds.)"""
    rows = marts_df(
        built_night,
        f"SELECT test_name, alert_id, statistic, p_value, threshold FROM {mart} "
        "WHERE NOT is_alert AND p_value IS NOT NULL",
    )
    tied = rows[rows.duplicated(["test_name", "statistic"], keep=False)]
    if mart == "stat_card_rank_frequency":  # one deck per shuffler here: every pair ties
        assert len(tied) >= 4, rows
    for _, family in tied.groupby(["test_name", "statistic"]):
        assert family["p_value"].nunique() == 1
        in_alert_order = family.sort_values("alert_id")["threshold"].tolist()
        assert in_alert_order == sorted(in_alert_order), family
        assert len(set(in_alert_order)) == len(in_alert_order), family


def test_hold_vs_expected_z_per_table_and_day_equals_pandas(
    built_night: BuiltNight, settlements: pd.DataFrame
) -> None:
    """The hold test from the settlements and the games' expectations, in pandas: per round,
    the players' positions' house result against their expected result given the decisions,
    the round's variance once (its positions share the dealer's cards); a round with a
    position the game could not value is left out. Alerts by Benjamini-Hochberg at 0.01 over
    the day's tests of every subject and shift."""
    lines = settlements[settlements["bettor"] != "house"]
    positions = lines.groupby(["round_id", "seat", "bettor"]).agg(
        table_id=("table_id", "first"), gaming_date=("gaming_date", "first"),
        wager=("wager_cents", "sum"), result=("house_result_cents", "sum"),
    ).reset_index()  # fmt: skip
    positions = positions[positions["wager"] > 0]
    expected = marts_df(
        built_night,
        "SELECT round_id, seat, expected_house_cents, round_variance "
        "FROM intermediate.int_position_expectations WHERE note IS NULL",
    )
    merged = positions.merge(expected, on=["round_id", "seat"], how="left")
    merged.loc[merged["bettor"] != "player", "expected_house_cents"] = np.nan
    rounds = merged.groupby("round_id").agg(
        table_id=("table_id", "first"), gaming_date=("gaming_date", "first"),
        result=("result", "sum"), expected=("expected_house_cents", "sum"),
        valued=("expected_house_cents", lambda s: bool(s.notna().all())),
        variance=("round_variance", "first"),
    )  # fmt: skip
    rounds = rounds[rounds["valued"]]
    assert len(rounds) > 0.95 * merged["round_id"].nunique()  # bad-data rounds are few
    per_table = rounds.groupby(["gaming_date", "table_id"]).agg(
        result=("result", "sum"), expected=("expected", "sum"), var=("variance", "sum")
    )
    per_table["z"] = (per_table["result"] - per_table["expected"]) / np.sqrt(per_table["var"])
    mart = marts_df(
        built_night,
        "SELECT gaming_date, subject_id AS table_id, z_score, is_alert, p_value "
        "FROM stat_hold_vs_theoretical WHERE subject_type = 'table' AND shift_no IS NULL",
    )
    mart["gaming_date"] = pd.to_datetime(mart["gaming_date"]).dt.date
    mart = mart.set_index(["gaming_date", "table_id"]).sort_index()
    per_table = per_table.sort_index()
    assert list(mart.index) == list(per_table.index)
    assert np.allclose(mart["z_score"], per_table["z"], atol=2e-6)
    two_sided = per_table["z"].abs().map(lambda z: math.erfc(z / math.sqrt(2)))
    assert np.allclose(mart["p_value"], two_sided, rtol=1e-4)
    family = marts_df(
        built_night, "SELECT gaming_date, p_value, is_alert FROM stat_hold_vs_theoretical"
    )
    family = family[family["p_value"].notna()]  # fewer rounds than min_hold_rounds: no p
    for _, day in family.groupby("gaming_date"):
        ranked = np.sort(day["p_value"].to_numpy())
        bounds = 0.01 * np.arange(1, len(ranked) + 1) / len(ranked)
        passing = np.flatnonzero(ranked <= bounds)
        cutoff = ranked[passing[-1]] if passing.size else -1.0
        # p-values are stored to 5 significant digits; the marts decide on the unrounded ones
        clear = np.abs(day["p_value"] - cutoff) > 1e-4 * np.maximum(day["p_value"], 1e-300)
        assert (day["is_alert"][clear] == (day["p_value"][clear] <= cutoff)).all()


def test_dealer_player_pairs_z_equals_pandas(
    built_night: BuiltNight, settlements: pd.DataFrame
) -> None:
    """The dealer x player pair test from the settlements and the games' expectations, in
    pandas: each pair's player positions with a wager, their house result against the expected
    result given the decisions, over the square root of the summed variances; pairs with fewer
    than 20 positions (var min_pair_positions) are not tested. The mart sums each pair
    incrementally (int_dealer_player_sums); this sums every position at once."""
    lines = settlements[(settlements["bettor"] == "player") & settlements["player_ref"].notna()]
    positions = lines.groupby(["round_id", "seat"]).agg(
        dealer_id=("dealer_id", "first"), player_ref=("player_ref", "first"),
        wager=("wager_cents", "sum"), result=("house_result_cents", "sum"),
    ).reset_index()  # fmt: skip
    positions = positions[positions["wager"] > 0]
    expected = marts_df(
        built_night,
        "SELECT round_id, seat, expected_house_cents, expected_variance "
        "FROM intermediate.int_position_expectations WHERE note IS NULL",
    )
    merged = positions.merge(expected, on=["round_id", "seat"], how="inner")
    pairs = merged.groupby(["dealer_id", "player_ref"]).agg(
        positions=("wager", "size"), result=("result", "sum"),
        expected=("expected_house_cents", "sum"), var=("expected_variance", "sum"),
    )  # fmt: skip
    pairs = pairs[pairs["positions"] >= 20].sort_index()
    pairs["z"] = (pairs["result"] - pairs["expected"]) / np.sqrt(pairs["var"])
    mart = (
        marts_df(
            built_night,
            "SELECT dealer_id, player_ref, sample_size, house_result_cents, z_score "
            "FROM stat_dealer_player_pairs",
        )
        .set_index(["dealer_id", "player_ref"])
        .sort_index()
    )
    assert len(pairs) > 10
    assert list(mart.index) == list(pairs.index)
    assert (mart["sample_size"] == pairs["positions"]).all()
    assert (mart["house_result_cents"] == pairs["result"]).all()
    assert np.allclose(mart["z_score"], pairs["z"], atol=2e-6)


def test_def_thp4_progressive_liability_and_hit_counts_equal_the_ledger(
    built_night: BuiltNight, settlements: pd.DataFrame
) -> None:
    ledger = lake_df(built_night, "SELECT * FROM jackpot_ledger")
    ledger = ledger.sort_values(["table_id", "occurred_at", "round_id", "entry_no"])
    ledger["gaming_date"] = casino_day(ledger["occurred_at"])
    daily = ledger.groupby(["gaming_date", "table_id"]).agg(
        contributions_cents=("amount_cents", lambda s: int(s[ledger.loc[s.index, "kind"]
                                                              == "contribution"].sum())),
        hits=("kind", lambda s: int((s == "hit").sum())),
        closing_meter_cents=("meter_after_cents", "last"),
        highest_meter_cents=("meter_after_cents", "max"),
    )  # fmt: skip
    mart = marts_df(
        built_night,
        "SELECT gaming_date, table_id, contributions_cents, hits, closing_meter_cents, "
        "highest_meter_cents FROM agg_progressive_daily",
    )
    mart["gaming_date"] = pd.to_datetime(mart["gaming_date"]).dt.date
    mart = mart.set_index(["gaming_date", "table_id"]).sort_index()
    assert mart.astype(int).to_dict("index") == daily.sort_index().astype(int).to_dict("index")
    # the jackpot test counts the same wagers and hits
    wagers = settlements[(settlements["spot"] == "progressive")
                         & (settlements["outcome"] != "returned")]  # fmt: skip
    test = marts_df(
        built_night,
        "SELECT subject_id, sample_size, statistic FROM stat_jackpot_frequency "
        "WHERE subject_type = 'table' AND hand = 'any'",
    ).set_index("subject_id")
    hits = ledger[ledger["kind"] == "hit"].groupby("table_id").size()
    for table, n in wagers.groupby("table_id").size().items():
        assert test.loc[table, "sample_size"] == n
        assert test.loc[table, "statistic"] == hits.get(table, 0)


def test_dealer_payout_accuracy_and_commission_shortfall_equal_pandas(
    built_night: BuiltNight, settlements: pd.DataFrame
) -> None:
    recorded = settlements[settlements["recorded_paid_cents"].notna()
                           & (settlements["bettor"] != "house")].copy()  # fmt: skip
    recorded["paid_diff"] = recorded["recorded_paid_cents"] - recorded["payout_cents"]
    recorded["short"] = recorded["commission_cents"] - recorded["recorded_commission_cents"]
    expected = recorded.groupby(["gaming_date", "dealer_id"]).agg(
        recorded_lines=("round_id", "size"),
        accurate_lines=("payout_difference_cents", lambda s: int((s == 0).sum())),
        overpaid_cents=("paid_diff", lambda s: int(s[s > 0].sum())),
        underpaid_cents=("paid_diff", lambda s: int(-s[s < 0].sum())),
        commission_shortfall_cents=("short", lambda s: int(s[s > 0].sum())),
    )
    mart = marts_df(
        built_night,
        "SELECT gaming_date, dealer_id, recorded_lines, accurate_lines, overpaid_cents, "
        "underpaid_cents, commission_shortfall_cents FROM agg_dealer_payouts",
    )
    mart["gaming_date"] = pd.to_datetime(mart["gaming_date"]).dt.date
    mart = mart.set_index(["gaming_date", "dealer_id"]).sort_index()
    assert mart.astype(int).to_dict("index") == expected.sort_index().astype(int).to_dict("index")
    assert int(mart["overpaid_cents"].sum()) > 0  # the night's overpayment faults are there


def test_violations_by_rule_severity_and_dealer_equal_the_lake(built_night: BuiltNight) -> None:
    lake = lake_df(
        built_night,
        "SELECT rule_id, severity, coalesce(dealer_id, '-') AS dealer_id, count(*) AS n "
        "FROM violations GROUP BY ALL",
    ).set_index(["rule_id", "severity", "dealer_id"])["n"]
    mart = marts_df(
        built_night,
        "SELECT rule_id, severity, coalesce(dealer_id, '-') AS dealer_id, "
        "sum(violations)::BIGINT AS n FROM agg_violations GROUP BY ALL",
    ).set_index(["rule_id", "severity", "dealer_id"])["n"]
    assert mart.sort_index().to_dict() == lake.sort_index().to_dict()
    assert lake.sum() > 0


def test_theoretical_win_is_exact_decimal_not_float(built_night: BuiltNight) -> None:
    con = built_night.marts_con()
    try:
        kind = con.execute(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_name = 'fct_bets' AND column_name = 'theoretical_win_cents'"
        ).fetchone()
        total = con.execute("SELECT sum(theoretical_win_cents) FROM fct_bets").fetchone()
    finally:
        con.close()
    assert kind is not None and kind[0].startswith("DECIMAL")
    assert total is not None and isinstance(total[0], Decimal)
