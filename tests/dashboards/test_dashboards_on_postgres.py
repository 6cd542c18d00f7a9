"""The dashboards on a lake whose catalog is on PostgreSQL (issue 19): a short night consumed into
a lake with its catalog on a real PostgreSQL server and built into marts, the settings pointing
at both (the URL with its password). The Revenue and Integrity pages show the lake's numbers, the
Integrity page's live panel lists a critical violation the consumer pipeline commits to that
lake after the build (and none from before), the password shows nowhere in what the pages
render, and with the catalog's server away (a port where nothing listens) the pages still show
the marts and the panel says the lake is away. The first two also with the lake's files in an
S3-compatible bucket (moto's server), as processes on several machines would share them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from streamlit.testing.v1 import AppTest

from dashboards import auth
from infra import lake as lakes
from infra import postgres_local
from infra.catalog_url import split_password
from infra.config import get_settings
from infra.kafka_local import free_port
from infra.marts import published_build
from tests import s3
from tests.dashboards.browser import MANAGER, SURVEILLANCE, write_users
from tests.dashboards.test_live_violations import (
    LIVE_SECONDS,
    LIVE_TITLE,
    _live_markdown,
    _panel_frame,
    commit_critical,
)
from tests.dashboards.test_pages import _logged_in, _metrics, _nothing_wrong, _shown, _visit

ROOT = Path(__file__).resolve().parents[2]
DATA_SETTING = "CROUPIER_LAKE_DATA"
SEED = 2025  # one table of each game for an hour: a critical DEF-THP2 overpayment among them


@dataclass(frozen=True, kw_only=True)
class PgStores:
    url: str  # the catalog's URL, with its password
    password: str
    lake: Path  # the lake's folder (its data; the catalog is on the server)
    marts: Path
    built_from: int  # the lake snapshot the build was made from
    data: dict[str, str]  # the settings of where its files are (none: in its folder)

    @property
    def handle(self) -> lakes.Lake:
        return lakes.Lake(root=self.lake, catalog_url=self.url, data=self.data.get(DATA_SETTING))


def _croupier(*args: str, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "croupier", *args],
        capture_output=True, text=True, env=env, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _stores(
    postgres_server: postgres_local.LocalPostgres, root: Path, data: dict[str, str]
) -> PgStores:
    """A night simulated, consumed into a lake with its catalog on the session's PostgreSQL
    server (a database of its own) and built, all by the `croupier` commands; `data`: the
    settings of where the lake's files go (none: its folder)."""
    url = postgres_local.create_database(postgres_server, f"t_{uuid.uuid4().hex[:12]}")
    password = split_password(url)[1]
    assert password
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CROUPIER_", "AWS_"))}
    env |= data | {
        "CROUPIER_LAKE_CATALOG": url,
        "CROUPIER_LAKE_PATH": str(root / "lake"),
        "CROUPIER_MARTS_PATH": str(root / "marts"),
        "CROUPIER_DATA_DIR": str(root / "var"),
    }
    night = root / "night.jsonl"
    _croupier(
        "simulate", "--tables-per-game", "1", "--hours", "1", "--seed", str(SEED),
        "--out", str(night), "--quiet", env=env,
    )  # fmt: skip
    _croupier("consume", "--file", str(night), env=env)
    _croupier("build", env=env)
    assert not (root / "lake" / "catalog.sqlite").exists()  # the catalog is on the server
    published = published_build(root / "marts")
    assert published is not None
    return PgStores(
        url=url,
        password=password,
        lake=root / "lake",
        marts=root / "marts",
        built_from=published.lake_snapshot_id,
        data=data,
    )


@pytest.fixture(scope="module")
def pg_stores(
    postgres_server: postgres_local.LocalPostgres, tmp_path_factory: pytest.TempPathFactory
) -> PgStores:
    """The lake's files in its folder."""
    return _stores(postgres_server, tmp_path_factory.mktemp("pg-dashboards"), {})


@pytest.fixture(scope="module")
def s3_stores(
    postgres_server: postgres_local.LocalPostgres,
    tmp_path_factory: pytest.TempPathFactory,
    s3_endpoint: str,
) -> PgStores:
    """The lake's files in a bucket of the session's S3 server (the several-machines setup)."""
    bucket = f"lake-{uuid.uuid4().hex[:12]}"
    s3.client(s3_endpoint).create_bucket(Bucket=bucket)
    data = s3.environment(s3_endpoint) | {"CROUPIER_LAKE_DATA": f"s3://{bucket}/lake/"}
    stores = _stores(postgres_server, tmp_path_factory.mktemp("s3-dashboards"), data)
    assert not list(stores.lake.rglob("*.parquet"))  # every file is in the bucket
    return stores


def _point_at(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stores: PgStores, catalog: str
) -> None:
    monkeypatch.setenv("CROUPIER_LAKE_CATALOG", catalog)
    monkeypatch.setenv("CROUPIER_LAKE_PATH", str(stores.lake))
    monkeypatch.setenv("CROUPIER_MARTS_PATH", str(stores.marts))
    monkeypatch.setenv("CROUPIER_DATA_DIR", str(tmp_path / "state"))
    monkeypatch.setenv(auth.USERS_ENV, str(write_users(tmp_path / "users.toml")))
    monkeypatch.delenv("PGPASSWORD", raising=False)  # set by reading the lake: put back after
    for name, value in stores.data.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(params=["pg_stores", "s3_stores"], ids=["data-in-folder", "data-in-bucket"])
def env(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[PgStores]:
    """Settings pointing at the PostgreSQL-catalog lake (its files in its folder, or in a
    bucket) and its marts."""
    stores: PgStores = request.getfixturevalue(request.param)
    _point_at(monkeypatch, tmp_path, stores, stores.url)
    get_settings.cache_clear()
    yield stores
    get_settings.cache_clear()


def _no_password(at: AppTest, password: str) -> None:
    """The password, as written or URL-encoded, is in nothing the page sent to the browser:
    markdown, text, captions, metrics, warnings, errors, exceptions (their stack traces too),
    tables and charts' data."""
    shown, _ = _shown(at)
    assert at.title and at.title[0].value in shown  # the walk reads what was rendered
    shown += "\n".join(f"{e.value}\n{e.stack_trace}" for e in at.exception)  # explicitly
    for form in {password, quote(password, safe="")}:
        if form in shown:  # not an assert: pytest would print the password
            pytest.fail("the catalog's password is in what the page rendered")


def _on_port(url: str, port: int) -> str:
    """`url` (password and all) with another port."""
    parts = urlsplit(url)
    userinfo, _, host = parts.netloc.rpartition("@")
    moved = urlunsplit(parts._replace(netloc=f"{userinfo}@{host.rsplit(':', 1)[0]}:{port}"))
    assert moved != url and split_password(moved)[1] == split_password(url)[1]
    return moved


def _lake_figures(stores: PgStores) -> dict[str, int]:
    """The lake's own figures at the snapshot the build was made from, read directly from the
    PostgreSQL-catalog lake (read-only)."""
    con = lakes.connect(stores.handle, read_only=True)
    at = f"AT (VERSION => {int(stores.built_from)})"
    try:
        figures = {
            "rounds": f"SELECT count(*) FROM rounds {at} WHERE status = 'settled'",
            "handle": f"SELECT sum(wager_cents) FROM settlements {at}",
            "violations": f"SELECT count(*) FROM violations {at}",
            "critical": f"SELECT count(*) FROM violations {at} WHERE severity = 'critical'",
        }
        return {
            name: int((con.execute(sql).fetchone() or (0,))[0] or 0)
            for name, sql in figures.items()
        }
    finally:
        con.close()


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}S/ {abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def test_revenue_and_integrity_show_the_numbers_of_the_postgres_catalog_lake(
    env: PgStores,
) -> None:
    lake = _lake_figures(env)
    assert lake["rounds"] > 50 and lake["critical"] >= 1

    revenue = _visit(_logged_in(MANAGER), "revenue")
    _nothing_wrong(revenue)
    assert [t.value for t in revenue.title] == ["Revenue"]
    shown = _metrics(revenue)
    assert shown["Handle"] == _money(lake["handle"])
    assert shown["Rounds"] == f"{lake['rounds']:,}"
    _no_password(revenue, env.password)

    integrity = _visit(_logged_in(MANAGER), "integrity")
    _nothing_wrong(integrity)
    assert [t.value for t in integrity.title] == ["Integrity"]
    shown = _metrics(integrity)
    assert shown["Violations"] == f"{lake['violations']:,}"
    assert shown["Critical"] == f"{lake['critical']:,}"
    assert LIVE_TITLE in [s.value for s in integrity.subheader]
    _no_password(integrity, env.password)


def test_the_live_panel_lists_a_critical_violation_committed_to_the_postgres_catalog_lake(
    env: PgStores,
) -> None:
    at = _visit(_logged_in(SURVEILLANCE), "integrity")
    _nothing_wrong(at)
    assert LIVE_TITLE in [s.value for s in at.subheader]
    detail = next(df.value for df in at.dataframe if "acknowledged" in df.value.columns)
    assert "DEF-THP2" in set(detail[detail["severity"] == "critical"]["rule_id"])  # before
    assert "No critical violation since the last build." in [s.value for s in at.success]
    published = published_build(env.marts)

    new = commit_critical(env.handle, nth=3)
    deadline = time.monotonic() + LIVE_SECONDS
    while new.round_id not in _live_markdown(at) and time.monotonic() < deadline:
        time.sleep(0.25)
        at.run()
    _nothing_wrong(at)
    shown = _live_markdown(at)
    assert new.round_id in shown and f"**{new.rule_id}**" in shown
    panel = _panel_frame(at)
    assert list(zip(panel["round_id"], panel["rule_id"], strict=True)) == [
        (new.round_id, new.rule_id)
    ]  # the new one only: not the DEF-THP2 from before the build
    assert panel["table_id"].iloc[0] == new.table_id
    assert published_build(env.marts) == published  # no rebuild
    _no_password(at, env.password)


def test_with_the_catalog_server_away_the_pages_show_the_marts_and_the_panel_warns(
    pg_stores: PgStores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = _on_port(pg_stores.url, free_port())  # nothing listens there
    _point_at(monkeypatch, tmp_path, pg_stores, wrong)
    get_settings.cache_clear()
    try:
        with pytest.raises(lakes.LakeError):
            lakes.from_settings().exists  # noqa: B018 - the server is away indeed
        started = time.monotonic()
        revenue = _visit(_logged_in(MANAGER), "revenue")
        _nothing_wrong(revenue)
        assert [t.value for t in revenue.title] == ["Revenue"]
        lake = _lake_figures(pg_stores)  # from the real server: what the marts were built from
        assert _metrics(revenue)["Handle"] == _money(lake["handle"])
        _no_password(revenue, pg_stores.password)

        integrity = _visit(_logged_in(SURVEILLANCE), "integrity")
        _nothing_wrong(integrity)
        assert [t.value for t in integrity.title] == ["Integrity"]
        warnings = [w.value for w in integrity.warning]
        assert any(w.startswith("Live violations unavailable") for w in warnings), warnings
        assert _metrics(integrity)["Violations"] == f"{lake['violations']:,}"
        assert len(integrity.get("vega_lite_chart")) == 3
        _no_password(integrity, pg_stores.password)
        assert time.monotonic() - started < 60  # the server away costs no long timeouts
    finally:
        get_settings.cache_clear()


def test_a_catalog_server_that_does_not_answer_costs_one_connect_timeout_not_one_a_query(
    pg_stores: PgStores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that takes the connection and never answers (hung, or behind a firewall that
    drops packets) holds each check for PGCONNECT_TIMEOUT: the pages ask whether the lake is
    there before every query (20 a run of the Integrity page), so they must not ask it each
    time (before the fix a run took 20 timeouts: 45 s at 2 s, over 3 minutes at the default
    10 s)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)  # the kernel completes the connection; nothing ever answers
        hung = _on_port(pg_stores.url, listener.getsockname()[1])
        _point_at(monkeypatch, tmp_path, pg_stores, hung)
        monkeypatch.setenv("PGCONNECT_TIMEOUT", "2")
        get_settings.cache_clear()
        try:
            started = time.monotonic()
            at = _logged_in(SURVEILLANCE)  # lands on the Integrity page
            _nothing_wrong(at)
            assert [t.value for t in at.title] == ["Integrity"]
            warnings = [w.value for w in at.warning]
            assert any(w.startswith("Live violations unavailable") for w in warnings), warnings
            assert {m.label for m in at.metric} >= {"Violations", "Critical", "Open alerts"}
            _no_password(at, pg_stores.password)
            at.run()
            _nothing_wrong(at)
            assert time.monotonic() - started < 20
        finally:
            get_settings.cache_clear()
