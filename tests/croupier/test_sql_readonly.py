"""`croupier sql` cannot write, whatever SQL it is given (issue 15, finding 4).

The lake is a real one (a short demo night through the consumer), with merged files left
scheduled for deletion so that DuckLake's cleanup functions would have something to destroy.
Every bypass is run through the real command line; afterwards the lake's content hashes and
every file under its folder (names, sizes, modification times) are as before, and nothing was
written outside it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumers.sink import content_hashes
from infra import lake as lakes

SMALL_DEMO = ("--tables", "1", "--hours", "0.5", "--no-build", "--json")


def croupier(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "croupier", *args], capture_output=True, text=True, input=stdin,
        timeout=300, env={**os.environ},
    )  # fmt: skip


def state(
    root: Path, *, lake: bool = True
) -> tuple[dict[str, str], dict[str, int], dict[str, tuple[int, int]]]:
    """Content hashes (of a lake), row counts, and (size, mtime) of every file under `root`."""
    con = lakes.connect(lakes.Lake(root=root), read_only=True)
    try:
        hashes = content_hashes(con) if lake else {}
        counts = lakes.table_counts(con)
    finally:
        con.close()
    files = {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith("catalog.sqlite-")  # WAL/SHM: SQLite's own
    }
    return hashes, counts, files


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sqlro") / "demo"
    demo = croupier("demo", "--dir", str(folder), *SMALL_DEMO)
    assert demo.returncode == 0, demo.stderr
    root = folder / "lake"
    # Files merged away and left scheduled for deletion: what DuckLake's cleanup would destroy.
    con = lakes.connect(lakes.Lake(root=root))
    try:
        con.execute("CREATE TABLE scratch (i INTEGER)")
        for i in range(4):
            con.execute("INSERT INTO scratch VALUES (?)", [i])
        con.execute("CALL ducklake_merge_adjacent_files('lake')")
        con.execute("CALL ducklake_expire_snapshots('lake', older_than => now())")
        rows = con.execute(
            "SELECT count(*) FROM __ducklake_metadata_lake.ducklake_files_scheduled_for_deletion"
        ).fetchall()
    finally:
        con.close()
    assert int(rows[0][0]) > 0, "no file scheduled for deletion: the cleanup attacks prove nothing"
    return root


def test_queries_still_work_and_every_write_is_refused(lake: Path, tmp_path: Path) -> None:
    catalog = (lake / "catalog.sqlite").resolve()
    data = (lake / "data").resolve()
    outside = tmp_path / "out"
    before = state(lake)
    settlements = before[1]["main.settlements"]
    assert settlements > 0

    # An analyst's queries, in each form the help names, still run.
    for query in (
        "SELECT count(*) AS n FROM settlements",
        "FROM rounds LIMIT 1",
        "WITH r AS (SELECT game FROM rounds) SELECT game, count(*) FROM r GROUP BY game",
        "SHOW TABLES",
        "DESCRIBE settlements",
        "SUMMARIZE rounds",
        "EXPLAIN SELECT count(*) FROM events",
        "SELECT count(*) FROM ducklake_snapshots('lake')",
        "SELECT * FROM ducklake_table_info('lake')",
        "PRAGMA database_list",
    ):
        result = croupier("sql", "--lake", str(lake), "--format", "json", "-c", query)
        assert result.returncode == 0, (query, result.stderr)
    count = croupier("sql", "--lake", str(lake), "--format", "csv", "-c",
                     "SELECT count(*) AS n FROM settlements")  # fmt: skip
    assert count.stdout.split() == ["n", str(settlements)]

    attacks = [
        "DELETE FROM settlements",
        "UPDATE settlements SET payout_cents = 0",
        "INSERT INTO rounds SELECT * FROM rounds",
        "DROP TABLE settlements",
        "CREATE TABLE memory.t AS SELECT 1",
        # The finding: detach the read-only lake, attach its catalog again read-write.
        f"USE memory; DETACH lake; ATTACH 'ducklake:sqlite:{catalog}' AS w "
        f"(DATA_PATH '{data}/'); DELETE FROM w.settlements",
        f"ATTACH 'ducklake:sqlite:{catalog}' AS w (DATA_PATH '{data}/')",
        f"ATTACH '{catalog}' AS s (TYPE sqlite)",
        "DETACH lake",
        "USE memory",
        "SELECT 1; DELETE FROM settlements",
        "/* a query */ DELETE FROM settlements",
        f"COPY (SELECT * FROM settlements) TO '{outside}.csv'",
        f"COPY settlements TO '{outside}.parquet'",
        f"EXPORT DATABASE '{outside}'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "RESET lock_configuration",
        "PRAGMA enable_checkpoint_on_shutdown",
        "PRAGMA threads = 1",
        "CHECKPOINT",
        "BEGIN TRANSACTION",
        "PREPARE p AS DELETE FROM settlements",
        "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)",
        # The same maintenance as table functions in a query: cleanup deletes scheduled files
        # from disk before it finds the catalog read-only.
        "SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => true)",
        "SELECT * FROM DuckLake_Cleanup_Old_Files('lake', cleanup_all => true)",
        "SELECT * FROM \"ducklake_cleanup_old_files\"('lake', cleanup_all => true)",
        "SELECT * FROM ducklake_delete_orphaned_files('lake', cleanup_all => true)",
        "SELECT * FROM ducklake_merge_adjacent_files('lake')",
        "SELECT * FROM ducklake_rewrite_data_files('lake')",
        "SELECT * FROM ducklake_expire_snapshots('lake', older_than => now())",
        "SELECT * FROM ducklake_flush_inlined_data('lake')",
        "SELECT * FROM ducklake_set_option('lake', 'data_inlining_row_limit', 10)",
        # Functions that run SQL given as text hide it from the statement check.
        "SELECT * FROM query('SELECT * FROM ducklake_cleanup_old_files(''lake'', "
        "cleanup_all => true)')",
        "SELECT (SELECT count(*) FROM query('SELECT 1'))",
        "SELECT * FROM json_execute_serialized_sql('{}')",
        f"SELECT * FROM sqlite_attach('{catalog}')",
        f"SELECT * FROM sqlite_query('{catalog}', 'DELETE FROM ducklake_snapshot')",
        "SELECT getenv('HOME')",
        "SELECT * FROM read_csv('/etc/passwd')",
        f"SELECT * FROM read_text('{catalog}')",
        "EXPLAIN ANALYZE SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => true)",
    ]
    for attack in attacks:
        result = croupier("sql", "--lake", str(lake), "-c", attack)
        assert result.returncode in (1, 2), (attack, result.stdout, result.stderr)
        assert "refused" in result.stderr or "error" in result.stderr, (attack, result.stderr)
    # The interactive shell (statements on stdin) runs each statement through the same checks.
    shell = croupier("sql", "--lake", str(lake), stdin="\n".join(a + ";" for a in attacks))
    assert "refused" in shell.stderr

    assert state(lake) == before
    assert not list(tmp_path.iterdir()), "a statement wrote outside the lake"


def test_a_marts_store_is_locked_the_same_way(lake: Path) -> None:
    """`croupier sql --lake var/marts` reads the published marts under the same walls."""
    marts = lake.parent / "marts"
    build = croupier("build", "--lake", str(lake), "--marts", str(marts))
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    before = state(marts, lake=False)
    ok = croupier("sql", "--lake", str(marts), "--format", "csv", "-c",
                  "SELECT count(*) AS n FROM fct_rounds")  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    for attack in (
        "DELETE FROM fct_rounds",
        "USE memory; DETACH marts",
        "SELECT * FROM ducklake_cleanup_old_files('marts', cleanup_all => true)",
    ):
        result = croupier("sql", "--lake", str(marts), "-c", attack)
        assert result.returncode == 2, (attack, result.stderr)
    assert state(marts, lake=False) == before


WORDS = ["SELECT", "FROM", "t", "DELETE", "ATTACH", "DETACH", "USE", "memory", "lake", "COPY",
         "TO", "'/tmp/x'", "CALL", "ducklake_cleanup_old_files('lake')", "query('SELECT 1')",
         "PRAGMA", "SET", "(", ")", ";", ",", "*", "1", "--", "/*", "*/", "'", '"', "EXPLAIN",
         "WITH", "AS", "INSERT", "INTO", "VALUES", "INSTALL", "LOAD", "httpfs",
         "sqlite_attach"]  # fmt: skip
_SMALL: list[tuple[Path, duckdb.DuckDBPyConnection, object]] = []


def _small_lake() -> tuple[Path, duckdb.DuckDBPyConnection, object]:
    """One small lake and one locked session on it, for every example (a session costs ~0.5 s),
    with what it held at the start."""
    from infra import readonly

    if not _SMALL:
        root = Path(tempfile.mkdtemp(prefix="sqlro-small-")) / "lake"
        con = lakes.connect(lakes.Lake(root=root), create=True)
        con.execute("CREATE TABLE t AS SELECT range AS i FROM range(5)")
        con.close()
        con = lakes.connect(lakes.Lake(root=root), read_only=True)
        readonly.lock(con, [lakes.Lake(root=root).data_location])
        _SMALL.append((root, con, _held(root, con)))
    return _SMALL[0]


def _held(root: Path, con: duckdb.DuckDBPyConnection) -> object:
    rows = con.execute(
        "SELECT (SELECT sum(i) FROM lake.t), "
        "(SELECT max(snapshot_id) FROM ducklake_snapshots('lake'))"
    ).fetchall()
    files = sorted((str(p), p.stat().st_size) for p in root.rglob("*") if p.is_file()
                   and not p.name.startswith("catalog.sqlite-"))  # fmt: skip
    return rows, files


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join) | st.text(max_size=120))
def test_any_sql_text_is_refused_fails_or_reads_and_the_lake_is_unchanged(sql: str) -> None:
    """Input we did not design: keyword soup and arbitrary text through the same checks as
    `croupier sql` (in-process, on a small lake): only `Refused` or DuckDB's own error escape,
    and whatever runs leaves the lake as it was."""
    from infra import readonly

    root, con, before = _small_lake()
    try:
        for statement in readonly.checked(con, sql):
            con.execute(statement).fetchall()
    except (readonly.Refused, duckdb.Error):
        pass
    assert _held(root, con) == before
