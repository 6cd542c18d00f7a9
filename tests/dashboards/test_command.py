"""`croupier dashboard`: password hashes for the users file, refusal of a missing or bad users
file (exit 2), demo users when none is configured, and the server's safe settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from croupier.cli import main
from croupier.commands import dashboard
from dashboards import auth
from infra.config import get_settings


def test_hash_password_prints_a_hash_that_verifies() -> None:
    result = CliRunner().invoke(
        main, ["dashboard", "--hash-password"], input="long-enough-1\nlong-enough-1\n"
    )
    assert result.exit_code == 0, result.output
    printed = result.output.strip().splitlines()[-1]
    assert printed.startswith("scrypt$16384$8$1$")
    assert auth.verify_password("long-enough-1", printed)


def test_a_short_password_is_bad_input() -> None:
    result = CliRunner().invoke(main, ["dashboard", "--hash-password"], input="short\nshort\n")
    assert result.exit_code == 2
    assert "at least 8 characters" in result.output


def test_a_missing_users_file_is_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["dashboard", "--users", str(tmp_path / "none.toml")])
    assert result.exit_code == 2
    assert "no users file at" in result.output


def test_a_malformed_users_file_is_bad_input(tmp_path: Path) -> None:
    users = tmp_path / "users.toml"
    users.write_text('[users.ana]\nrole = "boss"\npassword_hash = "x"\n')
    result = CliRunner().invoke(main, ["dashboard", "--users", str(users)])
    assert result.exit_code == 2
    assert "role 'boss' is not one of manager, surveillance" in result.output


def test_without_a_users_file_demo_users_are_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROUPIER_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(auth.USERS_ENV, raising=False)
    get_settings.cache_clear()
    try:
        path, created = dashboard.prepare_users(None)
        again, created_again = dashboard.prepare_users(None)
    finally:
        get_settings.cache_clear()
    assert path == (tmp_path / "dashboards" / "users.toml").resolve() == again
    assert created is not None and set(created) == {"manager", "surveillance"}
    assert created_again is None  # kept, not replaced
    users = auth.load_users(path)
    assert auth.authenticate(users, "manager", created["manager"]).role is auth.Role.MANAGER


def test_the_server_is_headless_local_and_hides_exception_details() -> None:
    args = dashboard.streamlit_args(Path("app.py"), port=8600, address="127.0.0.1")
    settings = dict(zip(args[5::2], args[6::2], strict=True))
    assert args[1:5] == ["-m", "streamlit", "run", "app.py"]
    assert settings["--server.address"] == "127.0.0.1"
    assert settings["--server.port"] == "8600"
    assert settings["--server.headless"] == "true"
    assert settings["--browser.gatherUsageStats"] == "false"
    assert settings["--client.showErrorDetails"] == "none"
    assert settings["--server.fileWatcherType"] == "none"
