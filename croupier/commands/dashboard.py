"""`croupier dashboard`: the Streamlit dashboards on the marts, behind a login.

It runs `streamlit run dashboards/server.py` (the app behind the gate of dashboards/gate.py)
with the stores, the users file and safe server settings; without a users file it creates
demo users (one per role) and prints them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from infra import lake as lakes

APP = Path(__file__).resolve().parents[2] / "dashboards" / "server.py"


def streamlit_args(app: Path, *, port: int, address: str, debug: bool = False) -> list[str]:
    """The `streamlit run` command line: headless, no file watcher, no usage statistics, and
    exception details hidden from the browser unless debugging."""
    return [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.port", str(port),
        "--server.address", address,
        "--server.headless", "true",
        "--server.fileWatcherType", "none",
        "--server.runOnSave", "false",
        "--browser.gatherUsageStats", "false",
        "--global.developmentMode", "false",
        "--client.toolbarMode", "minimal",
        "--client.showErrorDetails", "full" if debug else "none",
        "--theme.base", "light",
    ]  # fmt: skip


def prepare_users(users: Path | None) -> tuple[Path, dict[str, str] | None]:
    """The users file to use and, when demo users were just created, their passwords.

    A file named by `--users` or the `dashboard_users` setting must exist; the default one
    (`<data_dir>/dashboards/users.toml`) is created with demo users when missing."""
    from dashboards import auth
    from infra.config import get_settings

    named = users if users is not None else get_settings().dashboard_users
    if named is not None:
        path = named
        if not path.is_file():
            raise click.BadParameter(f"no users file at {path}", param_hint="--users")
        created = None
    else:
        path = auth.users_path()
        created = None
        if not path.is_file():
            path, created = auth.write_demo_users(path.parent)
    try:
        auth.load_users(path)
    except auth.UsersFileError as exc:
        raise click.BadParameter(str(exc), param_hint="--users") from exc
    return path.resolve(), created


def serve(
    lake: lakes.Lake,
    marts: Path,
    *,
    users: Path | None = None,
    port: int = 8501,
    address: str = "127.0.0.1",
    debug: bool = False,
) -> NoReturn:
    """Replace this process with the Streamlit server of the dashboards (`croupier demo
    --open` ends here too)."""
    from infra.config import get_settings

    users_file, created = prepare_users(users)
    if created:
        click.echo(f"No users configured: demo users written to {users_file}")
        for name, password in created.items():
            click.echo(f"  user {name:<13} password {password}")
        click.echo(f"  (also in {users_file.with_name('demo-credentials.txt')})")
    if not (marts / "catalog.sqlite").is_file():
        click.echo(
            f"warning: no marts at {marts} yet; the pages will say so until `croupier build` runs",
            err=True,
        )
    env = {
        **os.environ,
        "CROUPIER_LAKE_PATH": str(lake.root.resolve()),
        "CROUPIER_MARTS_PATH": str(marts.resolve()),
        "CROUPIER_DATA_DIR": str(get_settings().data_dir.resolve()),
        "CROUPIER_DASHBOARD_USERS": str(users_file),
    }
    click.echo(f"Croupier dashboards on http://{address}:{port}  (Ctrl-C to stop)", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, streamlit_args(APP, port=port, address=address, debug=debug), env)


@click.command()
@click.option(
    "--lake",
    "lake_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Lake to read round events from (default: the configured lake, var/lake).",
)
@click.option(
    "--marts",
    "marts_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Marts store to read (default: $CROUPIER_MARTS_PATH, else marts/ beside the lake).",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True)
@click.option(
    "--address",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; 0.0.0.0 serves the whole network (configure real users first).",
)
@click.option(
    "--users",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Users file (TOML). Default: $CROUPIER_DASHBOARD_USERS, else "
    "<data_dir>/dashboards/users.toml, created with demo users when missing.",
)
@click.option("--debug", is_flag=True, help="Show exception details in the browser.")
@click.option(
    "--hash-password",
    is_flag=True,
    help="Ask for a password, print its scrypt hash for the users file, and exit.",
)
def dashboard(
    lake_path: Path | None,
    marts_path: Path | None,
    port: int,
    address: str,
    users: Path | None,
    debug: bool,
    hash_password: bool,
) -> None:
    """Serve the revenue and integrity dashboards (Streamlit), behind a login.

    Pages: Floor, Revenue, Integrity, Dealers, Progressive, Round explorer. Managers see them
    all; surveillance sees Integrity, Dealers and the Round explorer. Users and roles come from
    a TOML file:

    \b
        [users.ana]
        role = "manager"            # or "surveillance"
        password_hash = "scrypt$16384$8$1$..."   # croupier dashboard --hash-password
        [sso]                       # optional, with st.login configured
        "ana@casino.pe" = "manager"

    Alerts acknowledged on the Integrity page are kept in <data_dir>/dashboards/acks.sqlite.
    """
    if hash_password:
        from dashboards import auth

        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
        if len(password) < 8:
            raise click.BadParameter("use at least 8 characters", param_hint="password")
        click.echo(auth.hash_password(password))
        return
    from infra.marts import default_marts_path

    lake = lakes.from_settings(lake_path)
    marts = marts_path if marts_path is not None else default_marts_path(lake)
    serve(lake, marts, users=users, port=port, address=address, debug=debug)
