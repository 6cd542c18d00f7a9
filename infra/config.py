"""Configuration in one place: environment variables, an optional TOML file, working defaults.

Precedence (highest first): `CROUPIER_*` / `KAFKA_*` environment variables, the TOML file named
by `CROUPIER_CONFIG` (or `./croupier.toml` when present), then the defaults below, which run the
whole platform on one machine with no servers.
"""

from __future__ import annotations

import os
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from infra.catalog_url import check_catalog_url
from infra.storage import check_data_location

# librdkafka security properties passed through from the environment unchanged, so a site's
# SASL/SSL setup never needs code here. `KAFKA_SASL_USERNAME` -> `sasl.username`, and so on.
KAFKA_SECURITY_ENV: dict[str, str] = {
    "KAFKA_SECURITY_PROTOCOL": "security.protocol",
    "KAFKA_SASL_MECHANISM": "sasl.mechanism",
    "KAFKA_SASL_USERNAME": "sasl.username",
    "KAFKA_SASL_PASSWORD": "sasl.password",
    "KAFKA_SSL_CA_LOCATION": "ssl.ca.location",
    "KAFKA_SSL_CERTIFICATE_LOCATION": "ssl.certificate.location",
    "KAFKA_SSL_KEY_LOCATION": "ssl.key.location",
    "KAFKA_SSL_KEY_PASSWORD": "ssl.key.password",
    "KAFKA_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM": "ssl.endpoint.identification.algorithm",
}


def _config_file() -> Path | None:
    named = os.environ.get("CROUPIER_CONFIG")
    if named:
        path = Path(named)
        if not path.is_file():
            raise FileNotFoundError(f"CROUPIER_CONFIG names {path}, which does not exist")
        return path
    local = Path("croupier.toml")
    return local if local.is_file() else None


def user_cache_dir() -> Path:
    """Where downloads (Kafka jars) are kept between runs: `$XDG_CACHE_HOME/croupier`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "croupier"


def parse_duration(text: str) -> timedelta:
    """'7 days', '12 hours', '30 minutes', '90 s', '1 week' -> timedelta (DuckDB's INTERVAL
    syntax, read by DuckDB itself); ValueError if it is not one or is negative."""
    import duckdb

    con = duckdb.connect()
    try:
        row = con.execute("SELECT to_seconds(0) + CAST(? AS INTERVAL)", [text]).fetchone()
    except duckdb.Error as exc:
        raise ValueError(f"not a duration: {text!r} (e.g. '7 days', '12 hours')") from exc
    finally:
        con.close()
    value = row[0] if row else None
    if not isinstance(value, timedelta) or value < timedelta(0):
        raise ValueError(f"not a non-negative duration: {text!r}")
    return value


class Settings(BaseSettings):
    """Every setting of the platform. Field docs are the user-facing documentation."""

    model_config = SettingsConfigDict(
        env_prefix="CROUPIER_",
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        hide_input_in_errors=True,  # a catalog URL may hold a password
        # an empty variable is an unset one, as `${CROUPIER_METRICS_PORT:-}` in a compose file
        # or a `KEY=` line in an env file give: the default, not a parse error
        env_ignore_empty=True,
    )

    data_dir: Path = Field(
        default=Path("var"),
        description="Working folder for the lake, the local broker and dashboards' state.",
    )
    lake_path: Path | None = Field(
        default=None, description="DuckLake folder (catalog.sqlite + data/); default data_dir/lake."
    )
    lake_catalog: str | None = Field(
        default=None,
        description="The lake's catalog on PostgreSQL (postgres://user[:password]@host:port/db; "
        "without a password libpq reads PGPASSWORD or ~/.pgpass), shared by consumers on "
        "several machines; default: catalog.sqlite in the lake folder, one writing process. "
        "The lake folder then holds the data, which every process must reach.",
    )
    lake_data: str | None = Field(
        default=None,
        description="Where the lake's Parquet files go when not in the lake folder's data/: "
        "a shared folder, or an S3-compatible URL (s3://bucket/prefix/; credentials from "
        "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, and "
        "AWS_ENDPOINT_URL for a server other than AWS). Fixed when the lake is made.",
    )
    marts_path: Path | None = Field(
        default=None,
        description="Marts store written by `croupier build`; default marts/ beside the lake.",
    )
    dashboard_users: Path | None = Field(
        default=None,
        description="Dashboard users file (TOML); default data_dir/dashboards/users.toml.",
    )
    dashboard_trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Addresses of the reverse proxies in front of the dashboard (JSON list): "
        "a sign-in through one is throttled by the client address in its X-Forwarded-For.",
    )
    cache_dir: Path = Field(
        default_factory=user_cache_dir,
        description="Download cache (Kafka jars); default ~/.cache/croupier.",
    )
    casino_id: str = Field(
        default="casino-lima-01",
        description="This casino's id: on produced events, and the only one the consumer "
        "accepts (another casino's events are dead letters, reason foreign_casino).",
    )
    max_clock_skew_s: float = Field(
        default=300.0,
        gt=0,
        description="Seconds an event's occurred_at may differ from the broker's timestamp "
        "(or, in a recording, go back on its table) before it is an EVT-TIME violation.",
    )
    lake_maintenance_every_s: float = Field(
        default=300.0,
        ge=0,
        description="Seconds between the consumer's lake maintenance passes, run between "
        "batches: merge small Parquet files, expire old snapshots, delete obsolete and "
        "orphaned files (see `croupier lake maintain`); 0 = never (run the command instead).",
    )
    lake_snapshot_retention: str = Field(
        default="1 day",
        description="Lake snapshots older than this are expired by maintenance: time travel "
        "(`AT (VERSION => ...)`) to them is gone; the rows themselves stay. Until then each "
        "snapshot keeps the small files its commit wrote. DuckDB interval text, e.g. '1 day', "
        "'36 hours'; longer than any build (a build reads the lake at one snapshot).",
    )
    lake_file_grace: str = Field(
        default="10 minutes",
        description="Maintenance deletes a Parquet file no snapshot reads any more (merged "
        "away, expired, or left by a killed writer) only once it is this old, so a running "
        "query never loses it; longer than any query. (Writers on this machine register "
        "their commits in flight; a writer on another machine needs a grace longer than its "
        "slowest commit.)",
    )

    kafka_bootstrap_servers: str = Field(
        default="127.0.0.1:9092",
        validation_alias=AliasChoices(
            "KAFKA_BOOTSTRAP_SERVERS", "CROUPIER_KAFKA_BOOTSTRAP_SERVERS"
        ),
        description="Kafka bootstrap servers (host:port,...).",
    )
    kafka_topic: str = Field(default="table-events", description="Topic of table events.")
    kafka_dead_letter_topic: str = Field(
        default="table-events.dead-letters", description="Topic receiving rejected messages."
    )
    kafka_partitions: int = Field(default=6, ge=1, description="Partitions when creating topics.")
    kafka_consumer_group: str = Field(
        default="croupier-settlement", description="Consumer group of the settlement consumer."
    )
    kafka_client: dict[str, str] = Field(
        default_factory=dict,
        description="Extra librdkafka properties (TOML table [kafka_client]), e.g. SASL settings.",
    )
    metrics_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Port of `croupier consume`'s Prometheus metrics and /healthz server "
        "(`--metrics-port`; with --workers N, worker i serves on this port + i); "
        "default: none, no server.",
    )

    local_kafka_version: str = Field(
        default="4.1.1", description="Apache Kafka version of the local broker (Maven Central)."
    )
    local_kafka_port: int = Field(
        default=9092, ge=1, le=65535, description="Port of the local broker."
    )
    local_kafka_controller_port: int = Field(
        default=9093, ge=1, le=65535, description="KRaft controller port of the local broker."
    )
    local_postgres_port: int = Field(
        default=55432,
        ge=1,
        le=65535,
        description="Port of the local PostgreSQL server (`croupier postgres start`, loopback).",
    )

    @field_validator("lake_catalog")
    @classmethod
    def _catalog(cls, value: str | None) -> str | None:
        return check_catalog_url(value) if value else None

    @field_validator("lake_data")
    @classmethod
    def _data(cls, value: str | None) -> str | None:
        return check_data_location(value) if value else None

    @field_validator("lake_snapshot_retention", "lake_file_grace")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)  # ValueError: pydantic reports the setting and the text
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = _config_file()
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @property
    def lake_dir(self) -> Path:
        return self.lake_path if self.lake_path is not None else self.data_dir / "lake"

    @property
    def kafka_dir(self) -> Path:
        """Logs, data and pid file of the local broker."""
        return self.data_dir / "kafka"

    @property
    def postgres_dir(self) -> Path:
        """Cluster, log and generated password of the local PostgreSQL server."""
        return self.data_dir / "postgres"

    def kafka_client_config(self, **overrides: Any) -> dict[str, Any]:
        """librdkafka configuration: bootstrap, security pass-through, extras, then overrides."""
        config: dict[str, Any] = {"bootstrap.servers": self.kafka_bootstrap_servers}
        for env_name, prop in KAFKA_SECURITY_ENV.items():
            value = os.environ.get(env_name)
            if value:
                config[prop] = value
        config.update(self.kafka_client)
        config.update(overrides)
        return config


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once; tests call `get_settings.cache_clear()`)."""
    return Settings()
