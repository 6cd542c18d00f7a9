"""`croupier lake migrate`: a SQLite-catalog lake copied to a PostgreSQL catalog (issue 19).

The copy holds every row, row id and snapshot of the source; consumption continues on it where
it stopped, with no gap and no double; what is refused writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from infra import lake as lakes
from infra import migrate as migration
from infra.catalog_url import split_password
from tests.consumers.helpers import consumer_command, consumer_env, lake_hashes, night, publish_raw

ROOT = Path(__file__).parents[2]


def sqlite_env(**extra: str) -> dict[str, str]:
    """This process's environment on the embedded catalog, plus `extra`."""
    return {k: v for k, v in os.environ.items() if k != "CROUPIER_LAKE_CATALOG"} | extra


def croupier(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "croupier", *args],
        capture_output=True, text=True, timeout=900, cwd=ROOT, env=env or sqlite_env(),
    )  # fmt: skip


def consume(env: dict[str, str], lake: Path, topic: str, group: str) -> None:
    done = subprocess.run(
        consumer_command(lake, topic, group, "--stop-when-idle", "4"),
        env=env, capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.kafka
def test_a_migrated_lake_equals_its_source_and_consumption_continues_without_gap_or_double(
    kafka_bootstrap: str, topic_name: str, postgres_database: str, tmp_path: Path
) -> None:
    messages = night(tables=3, hours=2, seed=23).messages
    first, rest = messages[: len(messages) // 2], messages[len(messages) // 2 :]
    publish_raw(kafka_bootstrap, topic_name, first, partitions=3)
    on_sqlite = consumer_env(kafka_bootstrap)
    on_sqlite.pop("CROUPIER_LAKE_CATALOG", None)
    group = f"g-{uuid.uuid4().hex[:8]}"
    old, new = tmp_path / "old", tmp_path / "new"
    consume(on_sqlite, old, topic_name, group)
    before = lake_hashes(lakes.Lake(root=old))

    moved = croupier(
        "lake", "migrate", "--lake", str(old), "--to", postgres_database,
        "--to-lake", str(new), "--json", env=on_sqlite,
    )  # fmt: skip
    assert moved.returncode == 0, moved.stderr[-3000:]
    password = split_password(postgres_database)[1]
    assert password and password not in moved.stdout + moved.stderr
    report = json.loads(moved.stdout)
    target = lakes.Lake(root=new, catalog_url=postgres_database)
    assert lake_hashes(target) == before  # every row, Kafka positions included
    assert lake_hashes(lakes.Lake(root=old)) == before  # the source untouched
    assert report["tables"]["main.events"] == int(before["events"].split(":")[0])
    assert not (new / "catalog.sqlite").exists()
    # The copy reads its own files: with the source's data gone it still answers.
    os.rename(old / "data", tmp_path / "old-data-aside")
    assert lake_hashes(target) == before
    os.rename(tmp_path / "old-data-aside", old / "data")

    # The rest of the night arrives; the same group continues on the new lake.
    publish_raw(kafka_bootstrap, topic_name, rest, create=False)
    consume(on_sqlite | {"CROUPIER_LAKE_CATALOG": postgres_database}, new, topic_name, group)
    whole = tmp_path / "whole"
    consume(on_sqlite, whole, topic_name, f"g-{uuid.uuid4().hex[:8]}")
    assert lake_hashes(target) == lake_hashes(lakes.Lake(root=whole))


def _night_lake(tmp_path: Path) -> lakes.Lake:
    recording = tmp_path / "night.jsonl"
    made = croupier("simulate", "--tables-per-game", "1", "--hours", "0.3", "--seed", "7",
                    "--out", str(recording))  # fmt: skip
    assert made.returncode == 0, made.stderr
    source = lakes.Lake(root=tmp_path / "source")
    done = croupier("consume", "--file", str(recording),
                    env=sqlite_env(CROUPIER_LAKE_PATH=str(source.root)))  # fmt: skip
    assert done.returncode == 0, done.stderr
    return source


def test_a_source_written_during_the_copy_is_refused_and_nothing_is_left(
    postgres_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _night_lake(tmp_path)
    target = lakes.Lake(root=tmp_path / "target", catalog_url=postgres_database)
    copy_files = migration._copy_files

    def copy_while_a_writer_commits(*args: object) -> list[Path]:
        copied = copy_files(*args)  # type: ignore[arg-type]
        con = lakes.connect(source)  # a real commit to the source, mid-migration
        try:
            con.execute(
                "INSERT INTO dead_letters (reason, detail) VALUES ('test', 'written meanwhile')"
            )
        finally:
            con.close()
        return copied

    monkeypatch.setattr(migration, "_copy_files", copy_while_a_writer_commits)
    with pytest.raises(migration.MigrationError, match="written during the migration"):
        migration.migrate(source, target)
    assert not [p for p in target.data_path.rglob("*") if p.is_file()]
    monkeypatch.undo()
    # Nothing of the failed run is in the way: run again, and the copy is whole.
    done = migration.migrate(source, target)
    assert lake_hashes(target) == lake_hashes(source)
    assert done.tables["main.dead_letters"] >= 1


def test_a_run_stopped_after_its_commit_is_verified_by_the_next_run_and_nothing_else_is(
    postgres_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed after the commit, before the verification: the catalog and every file are in
    # place, never verified. Running the migration again verifies that copy; a run to
    # another folder, or after the copy's files were touched, is refused.
    source = _night_lake(tmp_path)
    target = lakes.Lake(root=tmp_path / "target", catalog_url=postgres_database)

    def killed(*args: object) -> dict[str, int]:
        raise KeyboardInterrupt

    monkeypatch.setattr(migration, "_verify", killed)
    with pytest.raises(migration.MigrationError, match="committed but not verified"):
        migration.migrate(source, target)
    monkeypatch.undo()
    files = sorted(p for p in target.data_path.rglob("*") if p.is_file())
    assert files
    done = migration.migrate(source, target)  # verifies, copies nothing again
    assert done.files == len(files) and done.tables["main.events"] > 0
    assert sorted(p for p in target.data_path.rglob("*") if p.is_file()) == files
    assert lake_hashes(target) == lake_hashes(source)
    elsewhere = lakes.Lake(root=tmp_path / "elsewhere", catalog_url=postgres_database)
    with pytest.raises(migration.MigrationError, match="already holds a lake that is not a copy"):
        migration.migrate(source, elsewhere)
    assert not (elsewhere.data_path).exists()
    files[0].write_bytes(b"PAR1 damaged")
    with pytest.raises(migration.MigrationError, match="already holds a lake that is not a copy"):
        migration.migrate(source, target)


def test_what_migrate_refuses_it_refuses_with_a_clear_error_and_writes_nothing(
    postgres_database: str, tmp_path: Path
) -> None:
    source = _night_lake(tmp_path)
    env = sqlite_env(CROUPIER_LAKE_PATH=str(source.root))
    for inside in (source.root, source.root / "data" / "new", tmp_path):  # same, in, around
        same = croupier("lake", "migrate", "--to", postgres_database, "--to-lake", str(inside),
                        env=env)  # fmt: skip
        assert same.returncode == 1 and "folder of its own" in same.stderr, same.stderr
    assert not (source.root / "data" / "new").exists()
    bad = croupier("lake", "migrate", "--to", "mysql://x@h/db", "--to-lake", str(tmp_path / "t"),
                   env=env)  # fmt: skip
    assert bad.returncode == 2 and "PostgreSQL URL" in bad.stderr, bad.stderr
    missing = croupier("lake", "migrate", "--lake", str(tmp_path / "nowhere"), "--to",
                       postgres_database, "--to-lake", str(tmp_path / "t"), env=env)  # fmt: skip
    assert missing.returncode == 2 and "no lake" in missing.stderr, missing.stderr
    busy = tmp_path / "busy"
    (busy / "data").mkdir(parents=True)
    (busy / "data" / "someone-elses.parquet").write_bytes(b"x")
    occupied = croupier("lake", "migrate", "--to", postgres_database, "--to-lake", str(busy),
                        env=env)  # fmt: skip
    assert occupied.returncode == 1 and "not empty" in occupied.stderr, occupied.stderr
    assert (busy / "data" / "someone-elses.parquet").read_bytes() == b"x"

    first = croupier("lake", "migrate", "--to", postgres_database, "--to-lake",
                     str(tmp_path / "t"), env=env)  # fmt: skip
    assert first.returncode == 0, first.stderr
    again = croupier("lake", "migrate", "--to", postgres_database, "--to-lake",
                     str(tmp_path / "t2"), env=env)  # fmt: skip
    assert again.returncode == 1 and "already holds a lake" in again.stderr, again.stderr
    assert not (tmp_path / "t2" / "data").exists() or not any((tmp_path / "t2" / "data").iterdir())
    assert "Traceback" not in same.stderr + occupied.stderr + again.stderr


def test_a_symlinked_folder_of_the_source_is_copied_and_parallel_inits_make_one_lake(
    postgres_database: str, tmp_path: Path
) -> None:
    source = _night_lake(tmp_path)
    events = source.data_path / "main" / "events"
    aside = tmp_path / "elsewhere" / "events"
    aside.parent.mkdir()
    os.rename(events, aside)
    events.symlink_to(aside)
    target = lakes.Lake(root=tmp_path / "target", catalog_url=postgres_database)
    done = migration.migrate(source, target)
    assert done.tables["main.events"] > 0
    assert not (target.data_path / "main" / "events").is_symlink()  # a copy, not the link
    os.rename(aside, tmp_path / "elsewhere" / "gone")  # the source's events out of reach
    con = lakes.connect(target, read_only=True)
    try:
        (count,) = con.execute("SELECT count(*) FROM events WHERE payload IS NOT NULL").fetchone()
    finally:
        con.close()
    assert count == done.tables["main.events"]


def test_three_lake_inits_at_once_on_one_new_postgres_database_make_one_lake(
    postgres_database: str, tmp_path: Path
) -> None:
    env = sqlite_env(CROUPIER_LAKE_CATALOG=postgres_database, CROUPIER_LAKE_PATH=str(tmp_path))
    inits = [
        subprocess.Popen([sys.executable, "-m", "croupier", "lake", "init"], env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]  # fmt: skip
    outcomes = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in inits]
    assert [code for code, _ in outcomes] == [0, 0, 0], outcomes
    con = lakes.connect(lakes.Lake(root=tmp_path, catalog_url=postgres_database), read_only=True)
    try:
        tables = lakes.table_counts(con)
    finally:
        con.close()
    assert {"main.events", "main.violations", "main.lake_identity"} <= set(tables)
    assert tables["main.lake_identity"] == 1
