"""docker-compose.yml cannot run here (no Docker engine), so its commands are checked by reading:
every application service runs a `croupier` subcommand whose options parse, against services
that exist, with the environment the settings understand."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import yaml
from pydantic import ValidationError

from croupier.cli import main
from infra.config import Settings

COMPOSE = yaml.safe_load((Path(__file__).parents[2] / "docker-compose.yml").read_text())


def app_services() -> dict[str, dict[str, object]]:
    return {
        name: spec
        for name, spec in COMPOSE["services"].items()
        if spec.get("image") == "croupier:latest"
    }


def test_every_app_service_runs_a_croupier_command_whose_options_parse() -> None:
    services = app_services()
    assert {"lake-init", "consumer", "simulator", "marts", "dashboard"} <= set(services)
    for name, spec in services.items():
        args = list(spec["command"])  # type: ignore[call-overload]
        ctx = main.make_context("croupier", list(args), resilient_parsing=False)
        sub_name, sub, rest = main.resolve_command(ctx, list(args))
        assert sub is not None, name
        if isinstance(sub, click.Group):
            _, sub, rest = sub.resolve_command(ctx, rest)
        sub.make_context(sub_name or name, rest)  # raises on an unknown option


def test_services_depend_on_services_that_exist_and_env_is_understood(monkeypatch) -> None:
    names = set(COMPOSE["services"])
    for spec in COMPOSE["services"].values():
        for dependency in spec.get("depends_on", {}):
            assert dependency in names
        for key, value in (spec.get("environment") or {}).items():
            monkeypatch.setenv(key, str(value))
    settings = Settings()
    assert settings.kafka_bootstrap_servers == "kafka:19092"
    assert str(settings.data_dir) == "/data"
    # the lake's catalog on the postgres service, its password for libpq in PGPASSWORD
    assert settings.lake_catalog == "postgres://croupier@postgres:5432/lake"
    assert COMPOSE["services"]["postgres"]["environment"]["POSTGRES_USER"] == "croupier"
    for spec in app_services().values():
        assert (
            spec["environment"]["PGPASSWORD"]
            == (  # type: ignore[index]
                COMPOSE["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"]
            )
        )


def test_the_dashboard_is_reached_only_through_the_tls_proxy_it_trusts(monkeypatch) -> None:
    from dashboards.auth import client_address

    services = COMPOSE["services"]
    dashboard, proxy = services["dashboard"], services["proxy"]
    assert "ports" not in dashboard  # not published: only the proxy reaches it
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    caddyfile = Path(__file__).parents[2] / "compose" / "Caddyfile"
    mount = next(v for v in proxy["volumes"] if v.endswith(":/etc/caddy/Caddyfile:ro"))
    assert (Path(__file__).parents[2] / mount.split(":")[0]).resolve() == caddyfile.resolve()
    assert "reverse_proxy dashboard:8501" in caddyfile.read_text()
    # The proxy's fixed address is in its subnet and is the one the dashboard trusts.
    subnet = COMPOSE["networks"]["default"]["ipam"]["config"][0]["subnet"]
    address = proxy["networks"]["default"]["ipv4_address"]
    import ipaddress

    assert ipaddress.ip_address(address) in ipaddress.ip_network(subnet)
    for key, value in dashboard["environment"].items():
        monkeypatch.setenv(key, str(value))
    trusted = Settings().dashboard_trusted_proxies
    assert trusted == [address]
    headers = {"X-Forwarded-For": "1.2.3.4, 203.0.113.7"}
    assert client_address(address, headers, trusted) == "203.0.113.7"


def test_the_consumer_scales_and_its_healthcheck_asks_its_healthz(monkeypatch) -> None:
    import subprocess
    import sys

    from consumers.metrics import ConsumerMetrics, MetricsServer

    consumer = COMPOSE["services"]["consumer"]
    # `--scale consumer=3`: no fixed name, no host port; the metrics port inside the network
    assert "container_name" not in consumer and "ports" not in consumer
    port = int(consumer["environment"]["CROUPIER_METRICS_PORT"])
    assert consumer["expose"] == [str(port)]
    assert consumer["command"][consumer["command"].index("--metrics-host") + 1] == "0.0.0.0"
    for key, value in consumer["environment"].items():
        monkeypatch.setenv(key, str(value))
    assert Settings().metrics_port == port
    # The healthcheck's own command, run against a real server: fails on 503, passes on 200.
    kind, *check = consumer["healthcheck"]["test"]
    assert kind == "CMD" and check[0] == "python"
    metrics = ConsumerMetrics()
    server = MetricsServer(metrics, "127.0.0.1", 0)
    env = {"CROUPIER_METRICS_PORT": str(server.port), "PATH": "/usr/bin:/bin"}
    try:
        run = [sys.executable, *check[1:]]
        assert subprocess.run(run, env=env, capture_output=True, check=False).returncode != 0
        metrics.health.beat()
        assert subprocess.run(run, env=env, capture_output=True, check=False).returncode == 0
    finally:
        server.close()
    dashboard = COMPOSE["services"]["dashboard"]["healthcheck"]["test"]
    assert "http://127.0.0.1:8501/_stcore/health" in dashboard[-1]


def test_the_marts_builders_healthcheck_asks_its_healthz() -> None:
    import subprocess
    import sys

    from consumers.metrics import MetricsServer
    from croupier.commands.build import BuildMetrics

    marts = COMPOSE["services"]["marts"]
    command = marts["command"]
    port = int(command[command.index("--metrics-port") + 1])
    assert marts["expose"] == [str(port)] and "ports" not in marts
    assert command[command.index("--metrics-host") + 1] == "0.0.0.0"
    kind, *check = marts["healthcheck"]["test"]
    assert kind == "CMD" and check[0] == "python" and f"127.0.0.1:{port}/healthz" in check[-1]
    # The healthcheck's own command against a real server (on a free port here): 200, then 503.
    metrics = BuildMetrics(every=300)
    server = MetricsServer(metrics, "127.0.0.1", 0)
    try:
        here = check[-1].replace(f"127.0.0.1:{port}/", f"127.0.0.1:{server.port}/")
        run = [sys.executable, *check[1:-1], here]
        assert subprocess.run(run, capture_output=True, check=False).returncode == 0
        metrics.failed(RuntimeError("dbt build failed (exit 1)"), seconds=1.0)
        assert subprocess.run(run, capture_output=True, check=False).returncode != 0
    finally:
        server.close()


def test_the_image_holds_every_package_the_code_imports() -> None:
    """The Dockerfile copies each package of the wheel and the dbt project (it once left out
    `infra` and `games`, which every command imports: the image could not run)."""
    import re
    import tomllib

    root = Path(__file__).parents[2]
    wheel = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    packages = set(wheel["targets"]["wheel"]["packages"])
    copied = set(re.findall(r"^COPY (\S+) \1$", (root / "Dockerfile").read_text(), re.M))
    assert packages | {"dbt_project"} <= copied, sorted(packages - copied)
    top = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()} - {"tests", "bench"}
    assert top <= packages, sorted(top - packages)


def test_an_empty_variable_is_an_unset_setting(monkeypatch) -> None:
    # `${CROUPIER_METRICS_PORT:-}` in a compose file, or `KEY=` in an env file, gives an empty
    # value: the setting's default, not "unable to parse string as an integer"
    monkeypatch.setenv("CROUPIER_METRICS_PORT", "")
    monkeypatch.setenv("CROUPIER_LAKE_CATALOG", "")
    monkeypatch.setenv("CROUPIER_DATA_DIR", "")
    settings = Settings()
    assert settings.metrics_port is None and settings.lake_catalog is None
    assert settings.data_dir == Path("var")
    monkeypatch.setenv("CROUPIER_METRICS_PORT", "nine")
    with pytest.raises(ValidationError, match="metrics_port"):
        Settings()
