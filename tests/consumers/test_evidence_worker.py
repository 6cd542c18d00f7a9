"""`croupier evidence` (consumers/evaluation.py `evaluate_pending`): the hold test's expectations
and the decisions' evidence evaluated into the lake beside the consumer, once per round, so the
build only reads them. Proven on a real night settled into a real lake: the rows equal what the
build evaluates itself; a build reads the worker's rows and evaluates only the rest; workers
at once, one SIGKILLed, on either catalog, leave each round evaluated once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from consumers.evaluation import evaluate_pending, evaluation_table, games_with, pending_rounds
from consumers.schema import EVALUATED_ROUNDS, EVALUATION_TABLES, EVALUATION_VERSION
from croupier.cli import main
from croupier.commands.demo import run_in_process
from events.models import Game
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import BuildError, build_marts, connect_marts
from producers.simulator import DEFAULT_START
from tests.dbt.test_invariants_catch_breaks import failed_tests, failures

# One table of each game for an hour: about 130 rounds to evaluate, a few with bad data.
NIGHT = {"tables": 1, "hours": 1.0, "seed": 5, "faults": "default"}

COVERAGE = "assert_every_player_position_is_evaluated"


def settled(folder: Path, catalog: str | None = None) -> lakes.Lake:
    lake = lakes.Lake(root=folder / "lake", catalog_url=catalog)
    run_in_process(lake, progress=False, **NIGHT)  # type: ignore[arg-type]
    return lake


def reference(con: duckdb.DuckDBPyConnection, evaluation: str) -> list[dict[str, Any]]:
    """What the build evaluates itself for every round with player positions (sorted rows)."""
    games = ", ".join(f"'{g}'" for g in games_with(evaluation))
    table = evaluation_table(
        con,
        f"SELECT * FROM rounds WHERE game IN ({games}) AND round_id IN "
        "(SELECT round_id FROM settlements WHERE bettor = 'player')",
        evaluation,
        lake="",
    )
    return sorted(table.to_pylist(), key=repr)


def unversioned(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows as the marts hold them: without the evaluation version (sorted)."""
    return sorted(
        ({k: v for k, v in row.items() if k != "evaluation_version"} for row in rows), key=repr
    )


def stored(con: duckdb.DuckDBPyConnection, evaluation: str) -> list[dict[str, Any]]:
    rows = con.execute(f"SELECT * FROM {EVALUATION_TABLES[evaluation]}").to_arrow_table()
    return sorted(rows.to_pylist(), key=repr)


def marks(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, int]]:
    """(evaluation, round_id, times marked) of every evaluated round."""
    return con.execute(
        f"SELECT evaluation, round_id, count(*) FROM {EVALUATED_ROUNDS} GROUP BY ALL ORDER BY ALL"
    ).fetchall()


def assert_each_round_evaluated_once(lake: lakes.Lake) -> None:
    """Every round marked once, and the stored rows exactly what the build would evaluate."""
    con = lakes.connect(lake, read_only=True)
    try:
        assert {times for _, _, times in marks(con)} == {1}
        for evaluation in EVALUATION_TABLES:
            assert stored(con, evaluation) == reference(con, evaluation), evaluation
    finally:
        con.close()


def test_the_worker_evaluates_each_round_once_as_the_build_would(tmp_path: Path) -> None:
    lake = settled(tmp_path)
    con = lakes.connect(lake)
    try:  # a stored event the contract refuses: its round gets a note, as in the build
        unreadable, event_id = con.execute(
            "SELECT round_id, event_id FROM events WHERE event_type = 'player_decided' "
            "AND game = 'holdem' ORDER BY seq LIMIT 1 OFFSET 7"
        ).fetchone() or ("", "")
        con.execute(
            'UPDATE events SET payload = \'{"event_type": "player_decided", "v": 9}\' '
            "WHERE event_id = ?",
            [event_id],
        )
    finally:
        con.close()
    runner = CliRunner()
    first = runner.invoke(main, ["evidence", "--lake", str(lake.root), "--batch", "25"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(main, ["evidence", "--lake", str(lake.root)])
    assert again.exit_code == 0, again.output
    assert "evaluated 0 rounds' expectations and 0 rounds' decisions" in again.output
    con = lakes.connect(lake, read_only=True)
    try:
        for evaluation in EVALUATION_TABLES:
            expected = reference(con, evaluation)
            assert expected and stored(con, evaluation) == expected, evaluation
            assert pending_rounds(con, evaluation) == 0
            notes = {row["round_id"] for row in stored(con, evaluation) if row["note"]}
            assert notes == {unreadable}, evaluation
        found = marks(con)
        evaluated = con.execute(
            "SELECT count(DISTINCT round_id) FROM rounds WHERE round_id IN "
            "(SELECT round_id FROM settlements WHERE bettor = 'player') AND game = ?",
            [Game.HOLDEM.value],
        ).fetchone()
    finally:
        con.close()
    assert {times for _, _, times in found} == {1}
    holdem_marked = sum(1 for evaluation, _, _ in found if evaluation == "informed")
    assert evaluated is not None and holdem_marked >= evaluated[0] > 10
    assert f"evaluated {sum(e == 'expected' for e, _, _ in found):,} rounds' expectations" in (
        first.output
    )


# The dbt models' body (consumers/evidence.py `model`) on a lake, in a process of its own:
# the rows it gives each evaluation, and whether it loaded the rules engine (and pandas).
MODEL_RUN = """
import json, sys
from pathlib import Path
from consumers.evidence import model
from infra import lake as lakes

class Incremental:
    is_incremental = True

con = lakes.connect(lakes.Lake(root=Path(sys.argv[1])), read_only=True)
con.execute("USE memory")  # as the build's session uses the marts
positions = con.sql("SELECT round_id, bettor, rowid AS lake_row_id FROM lake.main.settlements")
rows = {
    evaluation: model(Incremental, con, positions, evaluation, -1).count("*").fetchone()[0]
    for evaluation in ("expected", "informed")
}
loaded = {"rules_engine": "games.registry" in sys.modules, "pandas": "pandas" in sys.modules}
print(json.dumps({"rows": rows, **loaded}))
"""


def test_a_build_loads_the_rules_engine_only_for_a_round_the_worker_has_not_been_over(
    tmp_path: Path,
) -> None:
    """The worker marks every round it has been over, those of a game without the evaluation
    too (Pai Gow has no decisions), so a build after it evaluates nothing and imports neither
    the games nor pandas (~1.5 s of every build); a round it has not reached is evaluated by the
    build, the same rows either way."""
    import json

    lake = settled(tmp_path)
    done = CliRunner().invoke(main, ["evidence", "--lake", str(lake.root)])
    assert done.exit_code == 0, done.output

    def run() -> dict[str, Any]:
        ran = subprocess.run(
            [sys.executable, "-c", MODEL_RUN, str(lake.root)], capture_output=True, text=True
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        return dict(json.loads(ran.stdout))

    con = lakes.connect(lake, read_only=True)
    try:
        stored_rows = {e: len(stored(con, e)) for e in EVALUATION_TABLES}
        [(informed_marks,)] = con.execute(
            f"SELECT count(*) FROM {EVALUATED_ROUNDS} WHERE evaluation = 'informed'"
        ).fetchall()
        pai_gow_marked = con.execute(
            f"SELECT count(*) FROM {EVALUATED_ROUNDS} JOIN rounds USING (round_id) "
            "WHERE evaluation = 'informed' AND game = ?",
            [Game.PAI_GOW.value],
        ).fetchone()
    finally:
        con.close()
    assert Game.PAI_GOW.value not in games_with("informed")
    assert pai_gow_marked is not None and pai_gow_marked[0] > 10
    judged = informed_marks - pai_gow_marked[0]  # the output counts rounds it evaluated
    assert f"and {judged:,} rounds' decisions" in done.output, done.output
    assert run() == {"rows": stored_rows, "rules_engine": False, "pandas": False}

    con = lakes.connect(lake)
    try:  # a lake no writer has opened since versions were kept: its rows are all version 1
        for table in (*EVALUATION_TABLES.values(), EVALUATED_ROUNDS):
            con.execute(f"ALTER TABLE {table} DROP COLUMN evaluation_version")
    finally:
        con.close()
    old_code = EVALUATION_VERSION != 1
    assert run() == {"rows": stored_rows, "rules_engine": old_code, "pandas": old_code}

    con = lakes.connect(lake)
    try:  # the worker has not reached one Hold'em round
        con.execute(
            f"DELETE FROM {EVALUATED_ROUNDS} WHERE evaluation = 'informed' AND round_id = "
            "(SELECT min(round_id) FROM decision_evidence WHERE seat IS NOT NULL)"
        )
        con.execute(
            "DELETE FROM decision_evidence WHERE round_id = (SELECT min(round_id) "
            "FROM decision_evidence WHERE seat IS NOT NULL)"
        )
    finally:
        con.close()
    assert run() == {"rows": stored_rows, "rules_engine": True, "pandas": True}


def built_evaluations(marts_path: Path) -> dict[str, list[dict[str, Any]]]:
    """The marts' int_position_expectations and int_decision_evidence rows (sorted), by
    evaluation, without the watermark."""
    marts = connect_marts(marts_path)
    try:
        return {
            evaluation: sorted(
                marts.execute(f"SELECT * EXCLUDE (lake_row_id) FROM intermediate.int_{table}")
                .to_arrow_table()
                .to_pylist(),
                key=repr,
            )
            for evaluation, table in EVALUATION_TABLES.items()
        }
    finally:
        marts.close()


def test_a_build_reads_the_worker_rows_and_only_a_re_evaluation_trusts_none(
    tmp_path: Path, dbt: DbtWorker
) -> None:
    """A second night half-way through the worker's backlog: the incremental build takes the
    worker's rows as they are in the lake (one altered here to tell them apart) and evaluates
    the other new rounds itself. A full refresh reads them too (re-evaluating 100,000 rounds
    takes minutes); `--full-refresh --re-evaluate` evaluates every round from the events
    again, so an altered or deleted row cannot outlive it."""
    lake = settled(tmp_path)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    con = lakes.connect(lake, read_only=True)
    try:
        first_night = {
            evaluation: pending_rounds(con, evaluation) for evaluation in EVALUATION_TABLES
        }
    finally:
        con.close()
    run_in_process(
        lake, progress=False, first_table=2, start=DEFAULT_START + timedelta(days=1),
        **NIGHT,  # type: ignore[arg-type]
    )  # fmt: skip
    con = lakes.connect(lake)
    try:
        for evaluation in EVALUATION_TABLES:  # the first night's rounds, then 15 of the second's
            step = evaluate_pending(con, evaluation, rounds=first_night[evaluation] + 15)
            assert step.marked == first_night[evaluation] + 15
            assert pending_rounds(con, evaluation) > 10
        references = {evaluation: reference(con, evaluation) for evaluation in EVALUATION_TABLES}
        (altered,) = con.execute(
            "SELECT round_id FROM decision_evidence WHERE round_id LIKE '%-02-%' "
            "ORDER BY round_id LIMIT 1"
        ).fetchone() or ("",)
        con.execute(
            "UPDATE decision_evidence SET gain_cents = 12345.0 WHERE round_id = ?", [altered]
        )
    finally:
        con.close()
    build_marts(lake, marts, quiet=True, dbt=dbt)
    built = built_evaluations(marts)
    assert built["expected"] == unversioned(references["expected"])
    informed = unversioned(references["informed"])
    assert sum(row["round_id"] == altered for row in informed) >= 1
    for row in informed:
        if row["round_id"] == altered:
            row["gain_cents"] = 12345.0
    assert built["informed"] == sorted(informed, key=repr)

    # a third night, evaluated, one round's stored expectations and another's decisions
    # deleted: their positions would vanish from the hold and hole-carding tests; the
    # coverage test fails the build instead, once per position and decision left out
    run_in_process(
        lake, progress=False, first_table=3, start=DEFAULT_START + timedelta(days=2),
        **NIGHT,  # type: ignore[arg-type]
    )  # fmt: skip
    result = CliRunner().invoke(main, ["evidence", "--lake", str(lake.root)])
    assert result.exit_code == 0, result.output
    con = lakes.connect(lake)
    try:
        references = {evaluation: reference(con, evaluation) for evaluation in EVALUATION_TABLES}
        deleted = [  # the first round of the night's expectations, the last one's decisions
            con.execute(
                f"DELETE FROM {table} WHERE round_id = (SELECT {pick}(round_id) FROM {table} "
                "WHERE round_id LIKE '%-03-%' AND seat IS NOT NULL)"
            ).fetchone()[0]  # type: ignore[index]
            for table, pick in (("position_expectations", "min"), ("decision_evidence", "max"))
        ]
    finally:
        con.close()
    assert all(deleted), deleted
    with pytest.raises(BuildError):
        build_marts(lake, marts, quiet=True, dbt=dbt)
    assert failed_tests(marts) == {COVERAGE}
    assert failures(marts, COVERAGE) == sum(deleted)

    with pytest.raises(BuildError):  # the stored rows as they are: the deleted ones still gone
        build_marts(lake, marts, full_refresh=True, quiet=True, dbt=dbt)
    assert failed_tests(marts) == {COVERAGE}
    assert failures(marts, COVERAGE) == sum(deleted)

    with pytest.raises(BuildError, match="full refresh"):
        build_marts(lake, marts, re_evaluate=True, quiet=True, dbt=dbt)
    build_marts(lake, marts, full_refresh=True, re_evaluate=True, quiet=True, dbt=dbt)
    built = built_evaluations(marts)
    assert built == {evaluation: unversioned(rows) for evaluation, rows in references.items()}
    assert [row["gain_cents"] for row in built["informed"] if row["round_id"] == altered]
    assert 12345.0 not in {row["gain_cents"] for row in built["informed"]}


def test_rows_of_another_evaluation_version_are_never_read_and_are_evaluated_again(
    tmp_path: Path, dbt: DbtWorker
) -> None:
    """Rows and marks an older EVALUATION_VERSION wrote (as after an upgrade that fixed the
    games' math; their numbers changed here to tell them apart): no build reads them, a build
    evaluates those rounds itself; the worker goes over them again, after the rounds it has
    never been over, and a full refresh then reads its new rows."""
    lake = settled(tmp_path)
    done = CliRunner().invoke(main, ["evidence", "--lake", str(lake.root)])
    assert done.exit_code == 0, done.output
    con = lakes.connect(lake)
    try:
        references = {evaluation: reference(con, evaluation) for evaluation in EVALUATION_TABLES}
        aged = [
            round_id
            for (round_id,) in con.execute(
                "SELECT DISTINCT round_id FROM decision_evidence WHERE seat IS NOT NULL "
                "ORDER BY round_id LIMIT 5"
            ).fetchall()
        ]
        assert len(aged) == 5
        for table in (*EVALUATION_TABLES.values(), EVALUATED_ROUNDS):
            con.execute(
                f"UPDATE {table} SET evaluation_version = ? WHERE round_id IN (SELECT UNNEST(?))",
                [EVALUATION_VERSION - 1, aged],
            )
        for table, column in (
            ("decision_evidence", "gain_cents"), ("position_expectations", "expected_house_cents")
        ):  # fmt: skip
            changed = con.execute(
                f"UPDATE {table} SET {column} = 12345.0 WHERE round_id IN (SELECT UNNEST(?)) "
                "AND seat IS NOT NULL",
                [aged],
            ).fetchone()
            assert changed is not None and changed[0] >= 5, table
        assert {e: pending_rounds(con, e) for e in EVALUATION_TABLES} == dict.fromkeys(
            EVALUATION_TABLES, 5
        )
    finally:
        con.close()

    def assert_built(marts: Path) -> None:
        built = built_evaluations(marts)
        assert built == {evaluation: unversioned(rows) for evaluation, rows in references.items()}

    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    assert_built(marts)

    run_in_process(
        lake, progress=False, first_table=2, start=DEFAULT_START + timedelta(days=1),
        **NIGHT,  # type: ignore[arg-type]
    )  # fmt: skip
    con = lakes.connect(lake)
    try:
        for evaluation in EVALUATION_TABLES:  # the rounds never gone over first
            never = pending_rounds(con, evaluation) - 5
            assert never > 10
            assert evaluate_pending(con, evaluation, rounds=never).marked == never
            redone = con.execute(
                f"SELECT count(*) FROM {EVALUATED_ROUNDS} WHERE evaluation = ? "
                "AND evaluation_version = ? AND round_id IN (SELECT UNNEST(?))",
                [evaluation, EVALUATION_VERSION, aged],
            ).fetchone()
            assert redone == (0,), evaluation
            assert evaluate_pending(con, evaluation, rounds=50).marked == 5
            assert pending_rounds(con, evaluation) == 0
        references = {evaluation: reference(con, evaluation) for evaluation in EVALUATION_TABLES}
        for evaluation in EVALUATION_TABLES:  # the aged rows are kept beside the new ones
            rows = stored(con, evaluation)
            current = [r for r in rows if r["evaluation_version"] == EVALUATION_VERSION]
            assert current == references[evaluation], evaluation
            assert {r["round_id"] for r in rows if r not in current} == set(aged), evaluation
    finally:
        con.close()
    build_marts(lake, marts, quiet=True, dbt=dbt)
    assert_built(marts)
    build_marts(lake, marts, full_refresh=True, quiet=True, dbt=dbt)
    assert_built(marts)


@pytest.mark.parametrize("catalog", ["sqlite", "postgres"])
def test_workers_at_once_one_of_them_killed_evaluate_each_round_once(
    catalog: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = request.getfixturevalue("postgres_database") if catalog == "postgres" else None
    lake = settled(tmp_path, url)
    env = {"CROUPIER_LAKE_CATALOG": url} if url else {}
    command = [sys.executable, "-m", "croupier", "evidence", "--lake", str(lake.root)]

    def start(*extra: str) -> subprocess.Popen[str]:
        import os

        return subprocess.Popen(
            [*command, *extra], env={**os.environ, **env}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def evaluated() -> int:
        con = lakes.connect(lake, read_only=True)
        try:
            return sum(times for _, _, times in marks(con))
        finally:
            con.close()

    killed = start("--batch", "3")
    deadline = time.monotonic() + 120
    while evaluated() == 0:  # its first batch committed: kill it in the middle of the rest
        assert killed.poll() is None and time.monotonic() < deadline, killed.communicate()
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.communicate()
    # one worker works the backlog off and ends; one keeps going until told to stop
    once, service = start("--batch", "4"), start("--batch", "4", "--every", "0.5")
    out, err = once.communicate(timeout=300)
    assert once.returncode == 0, err[-3000:]
    assert "evaluated" in out
    con = lakes.connect(lake, read_only=True)
    try:
        assert sum(pending_rounds(con, evaluation) for evaluation in EVALUATION_TABLES) == 0
    finally:
        con.close()
    service.send_signal(signal.SIGTERM)
    out, err = service.communicate(timeout=60)
    assert service.returncode == 0, err[-3000:]
    assert "evaluated" in out
    assert_each_round_evaluated_once(lake)


@pytest.mark.parametrize("catalog", ["sqlite", "postgres"])
def test_a_worker_beside_the_consumer_changes_nothing_the_consumer_writes(
    catalog: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The worker commits every 0.2 s (altering `evaluated_rounds` each time) while the
    consumer commits a recording in batches of 25: neither fails, and the consumer's tables
    equal those of the same recording consumed alone."""
    import os

    from producers.simulator import simulate
    from tests.consumers.helpers import lake_hashes

    url = request.getfixturevalue("postgres_database") if catalog == "postgres" else None
    sim = simulate(tables=1, hours=1.0, seed=6, faults={})
    recording = tmp_path / "night.jsonl"
    recording.write_text("".join(m.value.decode() + "\n" for m in sim))
    lake = lakes.Lake(root=tmp_path / "lake", catalog_url=url)
    env = {**os.environ, **({"CROUPIER_LAKE_CATALOG": url} if url else {})}
    croupier = [sys.executable, "-m", "croupier"]
    where = ["--lake", str(lake.root)]
    made = subprocess.run([*croupier, "lake", "init", *where], env=env, capture_output=True)
    assert made.returncode == 0, made.stderr
    worker = subprocess.Popen(
        [*croupier, "evidence", *where, "--every", "0.5", "--batch", "5"], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    consumed = subprocess.run(
        [*croupier, "consume", *where, "--file", str(recording), "--batch-size", "25"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    worker.send_signal(signal.SIGTERM)
    out, err = worker.communicate(timeout=120)
    assert consumed.returncode == 0, consumed.stderr[-3000:]
    assert worker.returncode == 0, err[-3000:]
    assert "evaluated" in out and "so far" in err  # it committed while the consumer did
    alone = lakes.Lake(root=tmp_path / "alone")
    result = CliRunner().invoke(
        main, ["consume", "--lake", str(alone.root), "--file", str(recording)]
    )
    assert result.exit_code == 0, result.output
    assert lake_hashes(lake) == lake_hashes(alone)
    finished = subprocess.run([*croupier, "evidence", *where], env=env, capture_output=True)
    assert finished.returncode == 0, finished.stderr
    assert_each_round_evaluated_once(lake)


def test_bad_usage_is_a_one_line_error_and_writes_nothing(tmp_path: Path) -> None:
    """Exit 2 with one line, no traceback, nothing created: no lake; a marts store given as the
    lake (it, and `consume`'s, would give it the lake's tables); options out of range."""
    marts = tmp_path / "marts"
    marts.mkdir()
    (marts / "catalog.sqlite").write_bytes(b"")
    (marts / "published.json").write_text("{}")
    runner = CliRunner()
    for args, says in (
        (["--lake", str(tmp_path / "nothing")], "no lake at"),
        (["--lake", str(marts)], "is a marts store"),
        (["--every", "nan"], "--every"),
        (["--every", "inf"], "--every"),
        (["--batch", "99999999999999999999"], "--batch"),
        (["--batch", "0"], "--batch"),
    ):
        result = runner.invoke(main, ["evidence", *args])
        assert result.exit_code == 2, (args, result.output)
        assert says in result.output and "Traceback" not in result.output, result.output
    recording = tmp_path / "night.jsonl"
    recording.write_text("")
    result = runner.invoke(main, ["consume", "--lake", str(marts), "--file", str(recording)])
    assert result.exit_code == 2 and "is a marts store" in result.output, result.output
    assert sorted(p.name for p in marts.iterdir()) == ["catalog.sqlite", "published.json"]
    assert not (tmp_path / "nothing").exists()
