"""The lake with its catalog on a real PostgreSQL server (issue 19): the same commands, the same
content as on the embedded SQLite catalog, and the password never shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infra import lake as lakes
from infra.catalog_url import check_catalog_url, redact, split_password
from tests.consumers.helpers import lake_hashes


def croupier(
    *args: str, catalog: str | None, lake: Path, cwd: Path
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CROUPIER_LAKE_CATALOG"}
    env |= {"CROUPIER_LAKE_PATH": str(lake), "CROUPIER_DATA_DIR": str(cwd / "var")}
    if catalog is not None:
        env["CROUPIER_LAKE_CATALOG"] = catalog
    return subprocess.run(
        [sys.executable, "-m", "croupier", *args],
        capture_output=True, text=True, env=env, timeout=900, cwd=Path(__file__).parents[2],
    )  # fmt: skip


def test_a_night_settled_into_a_postgres_catalog_equals_the_sqlite_one_and_builds(
    postgres_database: str, tmp_path: Path
) -> None:
    night = tmp_path / "night.jsonl"
    made = croupier(
        "simulate", "--tables-per-game", "1", "--hours", "1", "--seed", "19", "--out", str(night),
        catalog=None, lake=tmp_path / "unused", cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    on_pg, on_sqlite = tmp_path / "pg-lake", tmp_path / "sqlite-lake"
    password = split_password(postgres_database)[1]
    assert password
    for catalog, folder in ((postgres_database, on_pg), (None, on_sqlite)):
        init = croupier("lake", "init", catalog=catalog, lake=folder, cwd=tmp_path)
        assert init.returncode == 0, init.stderr
        done = croupier("consume", "--file", str(night), catalog=catalog, lake=folder, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert password not in init.stdout + init.stderr + done.stdout + done.stderr
    assert not (on_pg / "catalog.sqlite").exists()  # the catalog is on the server
    pg = lakes.Lake(root=on_pg, catalog_url=postgres_database)
    expected = lake_hashes(lakes.Lake(root=on_sqlite))
    assert lake_hashes(pg) == expected
    assert {"events", "rounds", "settlements", "violations"} <= set(expected)

    info = croupier("lake", "info", "--json", catalog=postgres_database, lake=on_pg, cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    report = json.loads(info.stdout)
    assert report["catalog"] == redact(postgres_database)
    assert password not in info.stdout
    assert report["tables"]["main.rounds"] > 50

    query = croupier(
        "sql", "--format", "json", "-c", "SELECT count(*) AS n FROM rounds",
        catalog=postgres_database, lake=on_pg, cwd=tmp_path,
    )  # fmt: skip
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout) == {"n": report["tables"]["main.rounds"]}
    paths = croupier(
        "sql", "--format", "json", "-c", "SELECT path FROM duckdb_databases()",
        catalog=postgres_database, lake=on_pg, cwd=tmp_path,
    )  # fmt: skip
    assert paths.returncode == 0 and "postgres://croupier@" in paths.stdout, paths.stderr
    assert password not in paths.stdout + paths.stderr
    write = croupier(
        "sql", "-c", "DELETE FROM rounds", catalog=postgres_database, lake=on_pg, cwd=tmp_path
    )
    assert write.returncode == 2 and "read-only" in (write.stdout + write.stderr).lower()

    marts = tmp_path / "marts"
    env_marts = {"CROUPIER_MARTS_PATH": str(marts)}
    os.environ.update(env_marts)
    try:
        built = croupier("build", catalog=postgres_database, lake=on_pg, cwd=tmp_path)
    finally:
        os.environ.pop("CROUPIER_MARTS_PATH")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert password not in built.stdout + built.stderr
    assert password not in "".join(
        p.read_text(errors="replace") for p in (marts / "_dbt" / "logs").glob("*.log")
    )
    from infra.marts import connect_marts

    con = connect_marts(marts)
    try:
        (rounds,) = con.execute("SELECT count(*) FROM fct_rounds").fetchone() or (0,)
    finally:
        con.close()
    assert rounds == report["tables"]["main.rounds"]


def test_a_wrong_password_or_no_server_is_a_clear_error_without_the_password(
    postgres_database: str, tmp_path: Path
) -> None:
    password = split_password(postgres_database)[1]
    assert password
    wrong = postgres_database.replace(f":{password}@", ":Wr0ngPa55@")
    result = croupier("lake", "init", catalog=wrong, lake=tmp_path / "lake", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "password authentication failed" in result.stderr
    assert "Wr0ngPa55" not in result.stderr and "Traceback" not in result.stderr
    info = croupier("lake", "info", catalog=wrong, lake=tmp_path / "lake", cwd=tmp_path)
    assert info.returncode == 1 and "Wr0ngPa55" not in info.stderr + info.stdout
    bad = croupier("lake", "info", catalog="mysql://x@y/z", lake=tmp_path / "lake", cwd=tmp_path)
    assert bad.returncode != 0 and "not a PostgreSQL URL" in bad.stderr + bad.stdout


@pytest.mark.parametrize(
    ("url", "bare", "password"),
    [
        ("postgres://u:p%40ss@127.0.0.1:5/db", "postgres://u@127.0.0.1:5/db", "p@ss"),
        ("postgresql://u@h/db", "postgresql://u@h/db", None),
        (
            "postgres://u:pw@[::1]:5432/db?sslmode=disable",
            "postgres://u@[::1]:5432/db?sslmode=disable",
            "pw",
        ),
        ("postgres://u:pa@ss@h/db", "postgres://u@h/db", "pa@ss"),
    ],
)
def test_split_password_keeps_the_host_and_redact_hides_it(
    url: str, bare: str, password: str | None
) -> None:
    assert check_catalog_url(url) == url
    assert split_password(url) == (bare, password)
    lakes.Lake(root=Path("/nowhere"), catalog_url=url).attach_sql()  # remembers the password
    shown = redact(f"failed: {url} and again: {password}")
    assert password is None or password not in shown


@pytest.mark.parametrize(
    "url",
    [
        "POSTGRES://u:pw@h/db",  # libpq would not read it as a URL
        "postgres://u@h/db?password=pw",  # the password where nothing hides it
        "postgres://u:pw@h:99999/db",
        "postgres://u:pw@h:abc/db",
        "postgres://u:pw@h",  # no database
        "mysql://u:pw@h/db",
        "host=h password=pw",
    ],
)
def test_a_catalog_url_that_is_not_one_is_refused_without_showing_it(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        check_catalog_url(url)
    assert "pw" not in str(refused.value).replace("password", "")


@pytest.mark.kafka
def test_a_replay_into_a_postgres_catalog_prints_the_hashes_of_one_into_sqlite(
    kafka_bootstrap: str, topic_name: str, postgres_database: str, tmp_path: Path
) -> None:
    from tests.consumers.helpers import night, publish_raw

    publish_raw(kafka_bootstrap, topic_name, night(tables=2, hours=1, seed=29).messages)
    env = {k: v for k, v in os.environ.items() if k != "CROUPIER_LAKE_CATALOG"}
    env["KAFKA_BOOTSTRAP_SERVERS"] = kafka_bootstrap

    def replay(folder: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "croupier", "replay", "--lake", str(tmp_path / folder),
             "--topic", topic_name, "--idle", "4", *extra],
            env=env, capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[2],
        )  # fmt: skip

    on_sqlite = replay("sqlite")
    on_pg = replay("pg", "--catalog", postgres_database)
    assert on_sqlite.returncode == 0 and on_pg.returncode == 0, on_sqlite.stderr + on_pg.stderr
    hashes = json.loads(on_pg.stdout)
    assert hashes == json.loads(on_sqlite.stdout)
    assert int(hashes["settlements"].split(":")[0]) > 100
    assert not (tmp_path / "pg" / "catalog.sqlite").exists()
    password = split_password(postgres_database)[1]
    assert password and password not in on_pg.stdout + on_pg.stderr

    again = replay("pg-again", "--catalog", postgres_database)  # that database holds a lake now
    assert again.returncode == 2 and "already holds a lake" in again.stderr, again.stderr
    assert password not in again.stderr
    bad = replay("bad", "--catalog", "postgresql://nobody@127.0.0.1:1/x?password=oops")
    assert bad.returncode == 2 and "oops" not in bad.stderr, bad.stderr
    assert not (tmp_path / "pg-again").exists() and not (tmp_path / "bad").exists()
