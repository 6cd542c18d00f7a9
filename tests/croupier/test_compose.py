"""docker-compose.yml cannot run here (no Docker engine), so its commands are checked by reading:
every application service runs a `croupier` subcommand whose options parse, against services
that exist, with the environment the settings understand."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from croupier.cli import main
from croupier.config import Settings

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
