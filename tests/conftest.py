"""Shared fixtures: a real local Kafka broker (KRaft) for the session, and private ones on demand;
a real PostgreSQL server for the session when a test asks for one; an S3-compatible server
(moto's) likewise.

The session broker is started by the same code as `croupier kafka start`, on free ports in a
temporary folder, unless KAFKA_BOOTSTRAP_SERVERS points at a broker that is already running;
the PostgreSQL server by the same code as `croupier postgres start`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra import kafka_local, postgres_local
from infra.config import user_cache_dir
from infra.kafka_local import free_port
from tests import s3

KAFKA_VERSION = os.environ.get("CROUPIER_LOCAL_KAFKA_VERSION", "4.1.1")


def make_broker(home: Path) -> kafka_local.LocalBroker:
    """A broker of our own in `home`, on two free loopback ports (not yet started)."""
    return kafka_local.LocalBroker(
        home=home,
        cache_dir=user_cache_dir(),
        version=KAFKA_VERSION,
        port=free_port(),
        controller_port=free_port(),
    )


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bootstrap address of a real Kafka broker for the whole test session."""
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if external:
        yield external
        return
    broker = make_broker(tmp_path_factory.mktemp("kafka"))
    kafka_local.start(broker)
    try:
        yield broker.bootstrap
    finally:
        kafka_local.stop(broker)


@pytest.fixture
def private_kafka_broker(tmp_path: Path) -> Iterator[kafka_local.LocalBroker]:
    """A broker of this test's own, already started; the test may stop and start it again."""
    broker = make_broker(tmp_path / "kafka")
    kafka_local.start(broker)
    try:
        yield broker
    finally:
        kafka_local.stop(broker)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[postgres_local.LocalPostgres]:
    """A real PostgreSQL server for the session (tests make databases of their own on it)."""
    with postgres_local.private() as server:
        yield server


@pytest.fixture
def postgres_database(postgres_server: postgres_local.LocalPostgres) -> str:
    """The URL (with password) of a new database of this test's own on the session server."""
    return postgres_local.create_database(postgres_server, f"t_{uuid.uuid4().hex[:12]}")


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of an S3-compatible server for the session (tests make buckets of their own)."""
    with s3.server(tmp_path_factory.mktemp("s3") / "moto.log") as url:
        yield url


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    """A new bucket of this test's own on the session's S3 server."""
    name = f"lake-{uuid.uuid4().hex[:12]}"
    s3.client(s3_endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture
def topic_name() -> str:
    """A fresh topic name, so tests sharing the session broker never see each other's data."""
    return f"test-{uuid.uuid4().hex[:12]}"


# The longest test files (a run on 4 xdist workers, 2 cores: 150-1,050 s each), started first so
# that no worker is still on one of them when the others have run out of files. A file missing
# from the list only runs in its usual place.
LONGEST_FIRST = (
    "tests/dbt/test_build_concurrency.py",
    "tests/consumers/test_evidence_worker.py",
    "tests/consumers/test_lake_maintenance.py",
    "tests/consumers/test_kafka_consumer.py",
    "tests/dbt/test_invariants_catch_breaks.py",
    "tests/dbt/test_marts_against_pandas.py",
    "tests/croupier/test_lake_on_s3.py",
    "tests/dbt/test_atomic_marts.py",
    "tests/dashboards/test_dashboards_on_postgres.py",
    "tests/croupier/test_sql_readonly.py",
    "tests/dashboards/test_players_page.py",
    "tests/consumers/test_many_consumers.py",
    "tests/consumers/test_consumer_ops.py",
    "tests/dashboards/test_browser.py",
    "tests/croupier/test_lake_on_postgres.py",
    "tests/croupier/test_lake_migrate.py",
    "tests/dashboards/test_what_if_panel.py",
    "tests/dashboards/test_pages.py",
    "tests/consumers/test_profile_versions_lake.py",
    "tests/consumers/test_file_source.py",
    "tests/dashboards/test_live_violations.py",
    "tests/dashboards/test_data.py",
    "tests/dbt/test_retired_marts.py",
    "tests/consumers/test_hostile_broker.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the longest files first, each file's tests in their own order (the sort is stable)."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
