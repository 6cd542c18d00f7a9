"""The hole-carding test's null law (consumers/evidence.py): the exact Poisson-binomial tail,
checked against enumerating every outcome, and against the binomial where all trials agree;
and what a round is judged on: the events up to its end (consumers/stored_rounds.py)."""

from __future__ import annotations

import itertools
import json
import math
import random
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from consumers.evidence import (
    PoissonBinomial,
    combined,
    poisson_binomial_law,
    poisson_binomial_sf,
    upper_tail,
)
from consumers.stored_rounds import stored_rounds
from croupier.cli import main
from events.models import Game
from games.base import RoundEvents
from games.profiles import load_profile
from games.registry import GAMES
from infra import lake as lakes
from producers.simulator import simulate


@pytest.mark.parametrize("seed", range(5))
def test_the_tail_is_the_sum_over_every_outcome(seed: int) -> None:
    rng = random.Random(seed)
    q = [rng.random() for _ in range(rng.randint(1, 10))]
    for k in range(len(q) + 2):
        brute = sum(
            math.prod(p if hit else 1 - p for p, hit in zip(q, outcome, strict=True))
            for outcome in itertools.product((False, True), repeat=len(q))
            if sum(outcome) >= k
        )
        assert poisson_binomial_sf(q, k) == pytest.approx(brute, abs=1e-12)


def test_equal_trials_give_the_binomial_tail() -> None:
    n, p = 60, 0.7
    law = PoissonBinomial()
    for _ in range(n):
        law.add(p)
    for k in (0, 30, 42, 50, 60):
        exact = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
        assert law.sf(k) == pytest.approx(exact, rel=1e-9)
    assert law.sf(61) == 0.0 and poisson_binomial_sf([], 0) == 1.0


@pytest.mark.parametrize("n", [1, 2, 3, 63, 64, 65, 129, 1001, 5000])
def test_the_product_tree_agrees_with_adding_trials_one_at_a_time(n: int) -> None:
    """poisson_binomial_sf multiplies the trials' polynomials pairwise (odd levels padded,
    short and long polynomials by different code, the long ones trimmed of their negligible
    ends); PoissonBinomial adds them one by one."""
    rng = random.Random(n)
    q = [rng.random() for _ in range(n)]
    law = PoissonBinomial()
    for p in q:
        law.add(p)
    mean, sd = sum(q), math.sqrt(sum(p * (1 - p) for p in q))
    tails = {round(mean + z * sd) for z in (3, 10, 20, 30)}  # down to ~1e-200
    for k in sorted({0, 1, n // 3, n // 2, (3 * n) // 4, n, n + 1} | tails):
        assert poisson_binomial_sf(q, k) == pytest.approx(law.sf(k), rel=1e-9, abs=1e-290)


def test_a_full_hole_carder_is_improbable_fast() -> None:
    """A player who matches every one of 20 decisions each matched with probability 0.6 by
    chance: p = 0.6^20 = 3.7e-5, below the 1e-4 a lone cheater among 100 players needs."""
    assert poisson_binomial_sf([0.6] * 20, 20) == pytest.approx(0.6**20, rel=1e-12)


def test_a_decision_recorded_after_the_round_ended_is_not_evidence(tmp_path: Path) -> None:
    """A console that sends a fold after its round ended (the consumer stores it, never
    applies it) must not change what the round is judged on: the events `stored_rounds` gives
    stop at round_ended, so the evidence says what was settled."""
    sim = simulate(
        tables={Game.TRIPOKER: 1, Game.HOLDEM: 0, Game.PAI_GOW: 0}, hours=0.5, seed=11, faults={}
    )
    events = [json.loads(m.value) for m in sim]
    ended = [i for i, e in enumerate(events) if e["event_type"] == "round_ended"][1]
    round_id = events[ended]["round_id"]
    played = next(
        e for e in events if e["round_id"] == round_id and e["event_type"] == "player_decided"
    )
    late = dict(played, event_id=str(uuid.uuid4()))
    late["decision"] = "fold" if played["decision"] == "play" else "play"
    late["amount_cents"] = 0 if late["decision"] == "fold" else played["amount_cents"] or 1_000
    events.insert(ended + 1, late)
    for seq, event in enumerate(events, start=1):  # one table: its sequence, renumbered
        event["seq"] = seq
    recording = tmp_path / "night.jsonl"
    recording.write_text("".join(json.dumps(e) + "\n" for e in events))
    lake = tmp_path / "lake"
    result = CliRunner().invoke(main, ["consume", "--file", str(recording), "--lake", str(lake)])
    assert result.exit_code == 0, result.output
    con = lakes.connect(lakes.Lake(root=lake), read_only=True)
    try:
        stored = con.execute(
            "SELECT count(*) FROM events WHERE event_id = ?", [late["event_id"]]
        ).fetchone()
        assert stored == (1,)  # the lake keeps it
        rebuilt = {
            meta["round_id"]: kinds
            for meta, kinds in stored_rounds(con, "SELECT * FROM rounds WHERE status = 'settled'")
        }
    finally:
        con.close()
    kinds = rebuilt[round_id]
    assert kinds[-1].event_type == "round_ended"
    assert str(late["event_id"]) not in {str(e.event_id) for e in kinds}
    found = GAMES[Game.TRIPOKER].informed
    assert found is not None
    judged = found(RoundEvents(kinds), load_profile("tripoker/pe-2005"), None)
    assert judged[played["seat"]].played.value == played["decision"]


def test_a_stored_event_that_no_longer_parses_leaves_its_round_unjudged_not_the_build(
    tmp_path: Path,
) -> None:
    """An event in the lake the contract refuses (written under another contract, or altered)
    once raised out of `stored_rounds` and failed the marts' build, every build after it: its
    round alone gets a note (the hold test leaves it out), the others are evaluated, and
    what-if counts it among the rounds it could not re-settle."""
    from consumers.evaluation import evaluation_table
    from consumers.what_if import Selection, compare

    sim = simulate(
        tables={Game.TRIPOKER: 1, Game.HOLDEM: 0, Game.PAI_GOW: 0}, hours=0.5, seed=12, faults={}
    )
    recording = tmp_path / "night.jsonl"
    recording.write_text("".join(m.value.decode() + "\n" for m in sim))
    lake = lakes.Lake(root=tmp_path / "lake")
    result = CliRunner().invoke(
        main, ["consume", "--file", str(recording), "--lake", str(lake.root)]
    )
    assert result.exit_code == 0, result.output
    con = lakes.connect(lake)
    try:
        round_id, event_id = con.execute(
            "SELECT round_id, event_id FROM events WHERE event_type = 'player_decided' "
            "ORDER BY seq LIMIT 1 OFFSET 3"
        ).fetchone() or ("", "")
        con.execute(  # as a later contract might have written it
            'UPDATE events SET payload = \'{"event_type": "player_decided", "v": 9}\' '
            "WHERE event_id = ?",
            [event_id],
        )
        table = evaluation_table(
            con, "SELECT * FROM rounds WHERE status = 'settled'", "informed", lake=""
        ).to_pylist()
        settled = con.execute("SELECT count(*) FROM rounds WHERE status = 'settled'").fetchone()
    finally:
        con.close()
    notes = {row["round_id"]: row["note"] for row in table if row["note"]}
    assert list(notes) == [round_id]
    assert notes[round_id].startswith("not evaluated: a stored event:")
    evaluated = {row["round_id"] for row in table if not row["note"]}
    assert settled is not None and len(evaluated) + 1 == settled[0] > 10

    comparison = compare(lake, load_profile("tripoker/pe-2005"), Selection(game=Game.TRIPOKER))
    assert comparison.not_resettled == 1
    assert round_id not in {r.round_id for r in comparison.rounds}


def decisions_table() -> Any:
    """A DuckDB connection with an empty table `d` shaped like fct_decisions."""
    import duckdb

    con = duckdb.connect()
    con.execute(
        "CREATE TABLE d (round_id VARCHAR, seat INT, player_ref VARCHAR, dealer_id VARCHAR, "
        "game VARCHAR, gaming_date DATE, played VARCHAR, legitimate VARCHAR, "
        "full_information VARCHAR, informative BOOLEAN, took_full_information BOOLEAN, "
        "gain_cents DECIMAL(18, 6), match_probability DOUBLE, lake_row_id BIGINT)"
    )
    return con


def test_decision_tests_recompute_only_players_with_new_decisions_and_keep_their_types() -> None:
    """agg_player_decisions' incremental step: a subject is tested again, as over all their
    decisions, only when one of them is above the watermark; with no such subject the rows are
    none but typed as always (an incremental model refuses a change of column types)."""
    from consumers.evidence import decision_tests

    con = decisions_table()
    empty = decision_tests(con, con.table("d"))
    con.execute(  # P1: two decisions, the newest at row 9; P2: one at row 3; no player: 12
        "INSERT INTO d VALUES "
        "('r0', 2, 'P2', 'D1', 'tripoker', '2026-01-01', 'play', 'play', 'play', false, true, "
        "0, 1.0, 3), "
        "('r1', 1, 'P1', 'D1', 'tripoker', '2026-01-01', 'play', 'play', 'fold', true, false, "
        "1.5, 0.3, 5), "
        "('r2', 1, 'P1', 'D2', 'tripoker', '2026-01-02', 'fold', 'play', 'fold', true, true, "
        "2.5, 0.6, 9), "
        "('r3', 1, NULL, 'D2', 'tripoker', '2026-01-02', 'fold', 'play', 'fold', true, true, "
        "2.5, 0.6, 12)"
    )
    full = decision_tests(con, con.table("d"))
    assert full.types == empty.types and full.columns == empty.columns
    rows = {
        tuple(json.loads(row[0])): dict(zip(full.columns, row, strict=True))
        for row in full.fetchall()
    }
    assert set(rows) == {
        ("player", "tripoker", None, "P1"), ("dealer_player", "tripoker", "D1", "P1"),
        ("dealer_player", "tripoker", "D2", "P1"), ("player", "tripoker", None, "P2"),
        ("dealer_player", "tripoker", "D1", "P2"),
    }  # fmt: skip
    assert len({row["code_version"] for row in rows.values()}) == 1
    player = rows[("player", "tripoker", None, "P1")]
    # one match of two trials with null probabilities 0.3 and 0.6: P(K >= 1) = 1 - 0.7 x 0.4
    assert (player["tested_decisions"], player["matches"]) == (2, 1)
    assert player["p_value"] == pytest.approx(0.72, abs=1e-12)
    assert player["expected_matches"] == pytest.approx(0.9)
    assert player["lake_row_id"] == 9
    # Step by step: the rows built up to row 8, and then the decisions above 8 added to them.
    # The one decision above 8 is P1's under D2: P1 and P1 x D2 alone are tested again, as
    # if from every decision (the other rows stay as they were); above 9, no one.
    early = decision_tests(con, con.table("d").filter("lake_row_id <= 8"))
    again = decision_tests(con, con.table("d"), since=8, previous=early)
    touched = [
        row for row in full.fetchall() if json.loads(row[0])[2:] in ([None, "P1"], ["D2", "P1"])
    ]
    assert len(touched) == 2
    assert_same_tests(again.fetchall(), touched, again.columns)
    assert decision_tests(con, con.table("d"), since=9, previous=full).fetchall() == []


def assert_same_tests(
    got: list[tuple[Any, ...]], want: list[tuple[Any, ...]], columns: list[str]
) -> None:
    """Rows of decision_tests equal by subject: counts, days and keys exactly; floats (sums in
    another order) to 1e-9; the stored laws coefficient by coefficient, to 1e-9 or 1e-290 (a
    law built in other pieces is trimmed of other negligible ends)."""
    assert len(got) == len(want)
    by_key = {row[0]: row for row in want}
    for row in got:
        other = by_key[row[0]]
        for name, a, b in zip(columns, row, other, strict=True):
            if name == "null_law_from":
                continue
            if name == "null_law":
                laws = [
                    (r[columns.index("null_law_from")], np.frombuffer(law, dtype="<f8"))
                    for r, law in ((row, a), (other, b))
                ]
                top = max(lowest + len(c) for lowest, c in laws)
                dense = [np.zeros(top), np.zeros(top)]
                for (lowest, c), d in zip(laws, dense, strict=True):
                    d[lowest : lowest + len(c)] = c
                assert np.allclose(*dense, rtol=1e-9, atol=1e-290), row[0]
            elif isinstance(a, float) and isinstance(b, float):
                assert a == pytest.approx(b, rel=1e-9, abs=1e-290), (name, row[0])
            else:
                assert a == b, (name, row[0])


def test_decision_tests_built_step_by_step_equal_the_tests_built_at_once() -> None:
    """The incremental step adds each build's new decisions to every subject's stored law
    (convolution) and counts: three steps give the rows of one pass over every decision, for
    players with laws long enough to be trimmed (thousands of decisions) and short ones, and
    for p-values from ~1 down to the far tail."""

    from consumers.evidence import decision_tests

    rng = np.random.default_rng(11)
    rows = []
    for player, n in (("long", 3_000), ("mid", 1_500), ("short", 40)):
        q = rng.uniform(0.05, 0.95, n)
        q[rng.random(n) < 0.05] = rng.choice([0.0, 1.0])  # no information: not tested
        # "long" matches far more often than its null: a p-value in the far tail
        took = rng.random(n) < (np.minimum(q + 0.1, 1) if player == "long" else q)
        for i in range(n):
            rows.append((f"{player}-{i:05d}", player, f"D{i % 3}", q[i], bool(took[i]), len(rows)))
    rng.shuffle(rows)
    con = decisions_table()
    con.executemany(
        "INSERT INTO d VALUES (?, 1, ?, ?, 'tripoker', DATE '2026-01-01' + (? % 30)::INTEGER, "
        "'play', 'play', 'fold', true, ?, 0.5, ?, ?)",
        [(r, p, dealer, row_id, took, q, row_id) for r, p, dealer, q, took, row_id in rows],
    )
    at_once = decision_tests(con, con.table("d"))
    # as the model keeps them: each step's rows replace the subject's (delete+insert)
    con.execute(
        "CREATE TABLE kept AS SELECT * FROM at_once LIMIT 0".replace("at_once", at_once.alias)
    )
    since = -1
    for upto in (1_500, 3_500, len(rows)):
        step = decision_tests(
            con, con.table("d").filter(f"lake_row_id < {upto}"), since=since,
            previous=con.table("kept") if since >= 0 else None,
        )  # fmt: skip
        con.execute(
            f"CREATE OR REPLACE TABLE kept AS SELECT * FROM kept WHERE subject_key NOT IN "
            f"(SELECT subject_key FROM {step.alias}) UNION ALL SELECT * FROM {step.alias}"
        )
        since = upto - 1
    want = at_once.fetchall()
    assert_same_tests(con.table("kept").fetchall(), want, at_once.columns)
    p_values = {
        json.loads(row[0])[3]: row[at_once.columns.index("p_value")]
        for row in want
        if json.loads(row[0])[0] == "player"
    }
    assert p_values["long"] < 1e-20 < p_values["mid"]


@pytest.mark.parametrize("seed", range(3))
def test_the_tail_takes_any_probabilities_without_raising(seed: int) -> None:
    """Probabilities the evaluation never gives (all but 0 or 1, or a NaN among thousands):
    a long law trimmed of its ends still answers a probability, never an exception (a NaN
    gives 1: no alert on a number that is not one)."""
    rng = random.Random(seed)
    n = rng.randint(1024, 4000)
    for q in (
        [rng.random() ** 50 for _ in range(n)],
        [1 - rng.random() ** 50 for _ in range(n)],
        [1e-320] * n,
        [rng.random() if i != n // 2 else math.nan for i in range(n)],
    ):
        for k in (1, n // 2, n):
            assert 0.0 <= poisson_binomial_sf(q, k) <= 1.0
            # and as the incremental model builds it: in pieces, multiplied together
            cut = rng.randint(0, n)
            law = combined(poisson_binomial_law(q[:cut]), poisson_binomial_law(q[cut:]))
            assert 0.0 <= upper_tail(law, k) <= 1.0
