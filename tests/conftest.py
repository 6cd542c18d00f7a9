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
from infra.dbt_worker import DbtWorker
from infra.kafka_local import free_port
from tests import s3

KAFKA_VERSION = os.environ.get("CROUPIER_LOCAL_KAFKA_VERSION", "4.1.1")

# The files that took longest in a profiled run (4 workers on 2 cores: 2,107 s down to 411 s),
# longest first. `./run test` hands whole files to the workers in collection order
# (--no-loadscope-reorder; by default pytest-xdist starts the files with the most tests first),
# so these are collected first: started last, they ran on alone at the end of the run while
# the other workers sat idle.
LONGEST_FIRST = (
    "dbt/test_build_scope.py",
    "consumers/test_evidence_worker.py",
    "consumers/test_hostile_input.py",
    "consumers/test_kafka_consumer.py",
    "dbt/test_invariants_catch_breaks.py",
    "dbt/test_dbt_worker.py",
    "dbt/test_marts_against_pandas.py",
    "dbt/test_atomic_marts.py",
    "consumers/test_lake_maintenance.py",
    "dbt/test_build_concurrency.py",
    "croupier/test_lake_on_s3.py",
    "dashboards/test_dashboards_on_postgres.py",
    "dbt/test_row_contract.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Collect LONGEST_FIRST's files first, the rest after them in their usual order."""
    tests = Path(__file__).parent

    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(tests).as_posix() if item.path.is_relative_to(tests) else ""
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


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


@pytest.fixture(scope="session")
def dbt() -> Iterator[DbtWorker]:
    """One dbt process for the builds of every test (`build_marts(..., dbt=dbt)`), of any lake
    into any marts store, as `croupier build --every` keeps one: the project is parsed once, not
    on every build (some 20 s of a build on a loaded CI machine). A test that kills it or
    changes what dbt parses gets another on its next build."""
    with DbtWorker() as worker:
        yield worker
