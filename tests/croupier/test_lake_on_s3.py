"""The lake's files in an S3-compatible bucket (issue 19): a real S3 server (moto's, over HTTP),
the catalog on PostgreSQL or SQLite, and every command as on a folder; credentials from the
environment only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from infra import lake as lakes
from infra import maintenance
from infra.kafka_local import free_port
from infra.storage import check_data_location, endpoint_settings
from tests.consumers.helpers import lake_hashes
from tests.s3 import KEY, SECRET, client, objects
from tests.s3 import environment as s3_env

ROOT = Path(__file__).parents[2]


def croupier(
    *args: str, lake: Path, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("AWS_") and k not in ("CROUPIER_LAKE_CATALOG", "CROUPIER_LAKE_DATA")
    }
    base |= {"CROUPIER_LAKE_PATH": str(lake), "CROUPIER_DATA_DIR": str(cwd / "var")}
    return subprocess.run(
        [sys.executable, "-m", "croupier", *args],
        capture_output=True, text=True, env=base | env, timeout=900, cwd=ROOT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("night")
    out = folder / "night.jsonl"
    made = croupier(
        "simulate", "--tables-per-game", "1", "--hours", "1", "--seed", "23", "--out", str(out),
        lake=folder / "unused", cwd=folder, env={},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return out


@pytest.mark.parametrize("on_postgres", [True, False], ids=["postgres-catalog", "sqlite-catalog"])
def test_a_lake_with_its_files_in_a_bucket_settles_queries_and_builds_like_a_folder(
    on_postgres: bool,
    request: pytest.FixtureRequest,
    s3_endpoint: str,
    bucket: str,
    night: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    catalog = request.getfixturevalue("postgres_database") if on_postgres else None
    data = f"s3://{bucket}/casino-a/lake/"
    env = s3_env(s3_endpoint) | {"CROUPIER_LAKE_DATA": data}
    if catalog is not None:
        env["CROUPIER_LAKE_CATALOG"] = catalog
    lake_dir, local_dir = tmp_path / "lake", tmp_path / "local-lake"
    for folder, with_env in ((lake_dir, env), (local_dir, {})):
        init = croupier("lake", "init", lake=folder, cwd=tmp_path, env=with_env)
        assert init.returncode == 0, init.stderr
        done = croupier("consume", "--file", str(night), lake=folder, cwd=tmp_path, env=with_env)
        assert done.returncode == 0, done.stderr
        assert KEY not in done.stdout + done.stderr and SECRET not in done.stdout + done.stderr

    # every Parquet file is in the bucket, none in the lake folder (which keeps this machine's
    # id indexes and locks)
    keys = objects(s3_endpoint, bucket)
    assert keys and all(k.startswith("casino-a/lake/") for k in keys)
    assert any(k.endswith(".parquet") for k in keys)
    assert not list(lake_dir.rglob("*.parquet"))
    for name, value in s3_env(s3_endpoint).items():
        monkeypatch.setenv(name, value)
    in_bucket = lakes.Lake(root=lake_dir, catalog_url=catalog, data=data)
    expected = lake_hashes(lakes.Lake(root=local_dir))
    assert lake_hashes(in_bucket) == expected
    assert {"events", "rounds", "settlements", "violations"} <= set(expected)

    info = croupier("lake", "info", "--json", lake=lake_dir, cwd=tmp_path, env=env)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["data"] == data

    # the read-only SQL session reads the bucket and nothing else
    count = croupier(
        "sql", "--format", "json", "-c", "SELECT count(*) AS n FROM rounds",
        lake=lake_dir, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert count.returncode == 0, count.stderr
    rounds = json.loads(count.stdout)["n"]
    assert rounds > 50
    other = f"{bucket}-other"
    client(s3_endpoint).create_bucket(Bucket=other)
    client(s3_endpoint).put_object(Bucket=other, Key="secret/x.csv", Body=b"a,b\n1,2\n")
    for query in (
        f"SELECT count(*) FROM read_parquet('s3://{bucket}/**/*.parquet')",
        # `allowed_directories` compares the text: `..` once reached another bucket
        f"SELECT * FROM read_csv('{data}../../{other}/secret/x.csv')",
        f"SELECT * FROM '{data}../../{other}/secret/x.csv'",
        f"SELECT * FROM read_text('{data}' || '.' || './../{other}/secret/x.csv')",
        # httpfs copies the AWS variables into the configuration
        "SELECT current_setting('s3_secret_access_key')",
        "SELECT value FROM duckdb_settings() WHERE name LIKE 's3%'",
    ):
        refused = croupier("sql", "-c", query, lake=lake_dir, cwd=tmp_path, env=env)
        assert refused.returncode == 2 and "not allowed" in refused.stderr, (query, refused)
        assert SECRET not in refused.stdout + refused.stderr and "1,2" not in refused.stdout

    # a process that does not know where the files are is told, not misled
    unset = {k: v for k, v in env.items() if k != "CROUPIER_LAKE_DATA"}
    lost = croupier("sql", "-c", "SELECT 1", lake=lake_dir, cwd=tmp_path, env=unset)
    assert lost.returncode == 1 and "lake_data" in lost.stderr, lost.stderr
    assert "Traceback" not in lost.stderr

    # a second lake on the same location would take the first's files for orphans: refused
    # (a folder of its own on the SQLite catalog; the same PostgreSQL catalog is the same lake)
    alone = {k: v for k, v in env.items() if k != "CROUPIER_LAKE_CATALOG"}
    second = croupier("lake", "init", lake=tmp_path / "second", cwd=tmp_path, env=alone)
    assert second.returncode == 1 and "already holds files" in second.stderr, second.stderr
    assert lake_hashes(in_bucket) == expected

    marts = tmp_path / "marts"
    built = croupier(
        "build", lake=lake_dir, cwd=tmp_path, env=env | {"CROUPIER_MARTS_PATH": str(marts)}
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert SECRET not in built.stdout + built.stderr
    from infra.marts import connect_marts

    con = connect_marts(marts)
    try:
        (built_rounds,) = con.execute("SELECT count(*) FROM fct_rounds").fetchone() or (0,)
    finally:
        con.close()
    assert built_rounds == rounds


def test_maintenance_merges_and_deletes_the_files_in_the_bucket(
    s3_endpoint: str, bucket: str, night: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3_env(s3_endpoint).items():
        monkeypatch.setenv(name, value)
    data = f"s3://{bucket}/lake/"
    store = lakes.Lake(root=tmp_path / "lake", data=data)
    env = s3_env(s3_endpoint) | {"CROUPIER_LAKE_DATA": data}
    lines = night.read_text().splitlines(keepends=True)
    # many small commits: one file per table each
    for part in range(4):
        chunk = tmp_path / f"part{part}.jsonl"
        chunk.write_text("".join(lines[: (part + 1) * len(lines) // 4]))
        done = croupier("consume", "--file", str(chunk), lake=store.root, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
    before = lake_hashes(store)
    orphan = f"lake/main/events/ducklake-orphan-{uuid.uuid4().hex}.parquet"
    client(s3_endpoint).put_object(Bucket=bucket, Key=orphan, Body=b"PAR1 left by a killed writer")

    con = lakes.connect(store)
    try:
        listed = maintenance.data_files(store, con)
        assert listed.files == sum(k.endswith(".parquet") for k in objects(s3_endpoint, bucket))
        report = maintenance.maintain(
            con, store, retention=maintenance.timedelta(0), grace=maintenance.timedelta(0)
        )
    finally:
        con.close()
    assert report.files_merged > 0
    assert report.after.files < report.before.files
    assert report.orphaned_files_deleted >= 1
    keys = objects(s3_endpoint, bucket)
    assert orphan not in keys
    # what is left is what the catalog reads, and the content is unchanged
    assert report.after.files == sum(k.endswith(".parquet") for k in keys)
    assert report.after.files == report.live_files_after
    assert lake_hashes(store) == before


def test_bad_storage_settings_are_clear_errors(tmp_path: Path) -> None:
    assert check_data_location("s3://bucket/prefix") == "s3://bucket/prefix/"
    assert check_data_location("/mnt/shared/lake-data") == "/mnt/shared/lake-data"
    wrong_urls = (
        "gs://bucket/x", "s3://", "s3://key:secret@bucket/x", "s3://bucket/x?versionId=1",
        "s3://bucket/it's/", "s3://Bucket/x", "s3://bucket/a b/", "s3://bucket/",
        "s3://bucket/p/../q/", "s3://bucket/p//q/", "s3://bucket/./p/",
    )  # fmt: skip
    for wrong in wrong_urls:
        with pytest.raises(ValueError, match="lake_data"):
            check_data_location(wrong)
    assert endpoint_settings({}) == {}
    assert endpoint_settings({"AWS_ENDPOINT_URL": "https://minio.example:9000"}) == {
        "s3_endpoint": "minio.example:9000", "s3_use_ssl": True, "s3_url_style": "path",
    }  # fmt: skip
    for wrong in ("minio:9000", "http://mini'o:9000", "http://minio:9000/x", "ftp://minio"):
        with pytest.raises(ValueError, match="AWS_ENDPOINT_URL"):
            endpoint_settings({"AWS_ENDPOINT_URL": wrong})

    refused = croupier(
        "lake", "init", lake=tmp_path / "lake", cwd=tmp_path,
        env={"CROUPIER_LAKE_DATA": "gs://bucket/lake"},
    )  # fmt: skip
    assert refused.returncode == 2 and "lake_data" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    endpoint = croupier(
        "lake", "init", lake=tmp_path / "lake", cwd=tmp_path,
        env={"CROUPIER_LAKE_DATA": "s3://bucket/lake/", "AWS_ENDPOINT_URL": "minio:9000"},
    )  # fmt: skip
    assert endpoint.returncode == 1 and "AWS_ENDPOINT_URL" in endpoint.stderr, endpoint.stderr
    assert "Traceback" not in endpoint.stderr


def test_a_bucket_missing_or_away_is_a_clear_error_and_a_rerun_loses_nothing(
    s3_endpoint: str, bucket: str, night: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = s3_env(s3_endpoint) | {"CROUPIER_LAKE_DATA": f"s3://{bucket}-missing/lake/"}
    missing = croupier("lake", "init", lake=tmp_path / "a", cwd=tmp_path, env=env)
    assert missing.returncode == 1 and "NoSuchBucket" in missing.stderr, missing.stderr
    assert "Traceback" not in missing.stderr

    env = s3_env(s3_endpoint) | {"CROUPIER_LAKE_DATA": f"s3://{bucket}/lake/"}
    init = croupier("lake", "init", lake=tmp_path / "b", cwd=tmp_path, env=env)
    assert init.returncode == 0, init.stderr
    away = env | {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"}  # nothing listens
    failed = croupier("consume", "--file", str(night), lake=tmp_path / "b", cwd=tmp_path, env=away)
    assert failed.returncode == 1 and "the lake's storage" in failed.stderr, failed.stderr
    assert "Traceback" not in failed.stderr and SECRET not in failed.stderr
    done = croupier("consume", "--file", str(night), lake=tmp_path / "b", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    # run again once the bucket is back: the same lake as one uninterrupted run
    local = croupier("consume", "--file", str(night), lake=tmp_path / "local", cwd=tmp_path, env={})
    assert local.returncode == 0, local.stderr
    for name, value in s3_env(s3_endpoint).items():
        monkeypatch.setenv(name, value)
    again = lakes.Lake(root=tmp_path / "b", data=env["CROUPIER_LAKE_DATA"])
    assert lake_hashes(again) == lake_hashes(lakes.Lake(root=tmp_path / "local"))
