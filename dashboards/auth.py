"""Who may see the dashboards: users with scrypt-hashed passwords and a role, from a TOML file.

The file is `$CROUPIER_DASHBOARD_USERS`, else `<data_dir>/dashboards/users.toml`; single sign-on
with `st.login` is offered too when `.streamlit/secrets.toml` has an `[auth]` section.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import threading
import time
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

USERS_ENV = "CROUPIER_DASHBOARD_USERS"
SESSION_KEY = "croupier_user"
SESSION_HOURS = 12
# scrypt cost (RFC 7914): n = 2^14, r = 8 takes ~50 ms and 16 MiB, slow enough to make
# guessing expensive and fast enough for a login form. Stored hashes above MAX_N are refused
# so a crafted users file cannot make a login allocate unbounded memory.
SCRYPT_N, SCRYPT_R, SCRYPT_P, MAX_N = 2**14, 8, 1, 2**20
MAX_FAILURES, LOCKOUT_SECONDS = 5, 60
MAX_INPUT = 200


class Role(StrEnum):
    MANAGER = "manager"
    SURVEILLANCE = "surveillance"


# Which role sees which page: the one table the router and every page consult.
PAGE_ROLES: dict[str, frozenset[Role]] = {
    "floor": frozenset({Role.MANAGER}),
    "revenue": frozenset({Role.MANAGER}),
    "integrity": frozenset({Role.MANAGER, Role.SURVEILLANCE}),
    "dealers": frozenset({Role.MANAGER, Role.SURVEILLANCE}),
    "progressive": frozenset({Role.MANAGER}),
    "round_explorer": frozenset({Role.MANAGER, Role.SURVEILLANCE}),
}


class UsersFileError(ValueError):
    """The users file is missing or malformed; the message names the file and the problem."""


@dataclass(frozen=True, kw_only=True)
class User:
    name: str
    role: Role
    logged_in_at: float

    def may_see(self, page: str) -> bool:
        return self.role in PAGE_ROLES[page]


@dataclass(frozen=True, kw_only=True)
class Account:
    role: Role
    password_hash: str


@dataclass(frozen=True, kw_only=True)
class Users:
    accounts: dict[str, Account]
    sso_roles: dict[str, Role]  # e-mail (lower case) -> role, for st.login users


def hash_password(password: str, *, n: int = SCRYPT_N) -> str:
    """`scrypt$n$r$p$salt$hash` with a random 16-byte salt (base64 parts)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=n, r=SCRYPT_R, p=SCRYPT_P, maxmem=_maxmem(n, SCRYPT_R)
    )
    return "$".join(["scrypt", str(n), str(SCRYPT_R), str(SCRYPT_P), _b64(salt), _b64(digest)])


def verify_password(password: str, encoded: str) -> bool:
    """True when `password` matches the stored hash; a malformed hash never matches."""
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        return False
    try:
        n, r, p = (int(x) for x in parts[1:4])
        salt, expected = base64.b64decode(parts[4]), base64.b64decode(parts[5])
    except ValueError:
        return False
    if not (2 <= n <= MAX_N and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 4 and expected):
        return False
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=n, r=r, p=p, maxmem=_maxmem(n, r), dklen=len(expected)
    )
    return hmac.compare_digest(digest, expected)


def _maxmem(n: int, r: int) -> int:
    return 128 * r * n * 2 + 1024 * 1024


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def users_path() -> Path:
    """The configured `dashboard_users` file, else `<data_dir>/dashboards/users.toml`."""
    from croupier.config import get_settings

    settings = get_settings()
    if settings.dashboard_users is not None:
        return settings.dashboard_users
    return settings.data_dir / "dashboards" / "users.toml"


def parse_users(text: str, *, origin: str) -> Users:
    """Users from TOML: `[users.<name>]` with `role` and `password_hash`, optional `[sso]`
    mapping e-mail addresses to roles."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsersFileError(f"{origin}: not valid TOML ({exc})") from exc
    unknown = set(raw) - {"users", "sso"}
    if unknown:
        raise UsersFileError(f"{origin}: unknown sections {sorted(unknown)}")
    accounts: dict[str, Account] = {}
    for name, entry in raw.get("users", {}).items():
        if not isinstance(entry, dict) or set(entry) != {"role", "password_hash"}:
            raise UsersFileError(f"{origin}: [users.{name}] needs exactly role and password_hash")
        accounts[name] = Account(
            role=_role(entry["role"], origin), password_hash=str(entry["password_hash"])
        )
    sso = {str(mail).lower(): _role(role, origin) for mail, role in raw.get("sso", {}).items()}
    if not accounts and not sso:
        raise UsersFileError(f"{origin}: no [users.*] and no [sso] entries")
    return Users(accounts=accounts, sso_roles=sso)


def _role(value: object, origin: str) -> Role:
    try:
        return Role(str(value))
    except ValueError:
        roles = ", ".join(r.value for r in Role)
        raise UsersFileError(f"{origin}: role {value!r} is not one of {roles}") from None


def load_users(path: Path | None = None) -> Users:
    path = path if path is not None else users_path()
    if not path.is_file():
        raise UsersFileError(
            f"no users file at {path}: start the dashboards with `croupier dashboard` (it "
            f"creates demo users) or set {USERS_ENV}"
        )
    return parse_users(path.read_text(), origin=str(path))


def write_demo_users(folder: Path) -> tuple[Path, dict[str, str]]:
    """Create `users.toml` with one user per role, named after it, with random passwords;
    the passwords are also written to `demo-credentials.txt` (mode 600) beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    passwords = {role.value: secrets.token_urlsafe(12) for role in Role}
    lines = ["# Demo users made by `croupier dashboard`; passwords in demo-credentials.txt.", ""]
    for name, password in passwords.items():
        digest = hash_password(password)
        lines += [f"[users.{name}]", f'role = "{name}"', f'password_hash = "{digest}"', ""]
    users = folder / "users.toml"
    credentials = folder / "demo-credentials.txt"
    _write_private(credentials, "".join(f"{n} {p}\n" for n, p in passwords.items()))
    _write_private(users, "\n".join(lines))
    return users, passwords


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


class _Throttle:
    """Failed logins per user name: after MAX_FAILURES in a row, refuse for LOCKOUT_SECONDS."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}

    def locked(self, name: str) -> bool:
        with self._lock:
            count, since = self._failures.get(name, (0, 0.0))
            return count >= MAX_FAILURES and time.monotonic() - since < LOCKOUT_SECONDS

    def record(self, name: str, *, ok: bool) -> None:
        with self._lock:
            if ok:
                self._failures.pop(name, None)
            else:
                count, _ = self._failures.get(name, (0, 0.0))
                self._failures[name] = (count + 1, time.monotonic())


THROTTLE = _Throttle()
# Checked when the name is unknown, so a wrong name costs as long as a wrong password.
_DUMMY_HASH = hash_password(secrets.token_urlsafe(12))


class LoginRefused(Exception):
    """Wrong name or password, or too many attempts; the message is safe to show."""


def authenticate(users: Users, name: str, password: str) -> User:
    name = name.strip()[:MAX_INPUT]
    if THROTTLE.locked(name):
        raise LoginRefused(f"Too many failed attempts: wait {LOCKOUT_SECONDS} s and try again.")
    account = users.accounts.get(name)
    ok = verify_password(password[:MAX_INPUT], account.password_hash if account else _DUMMY_HASH)
    THROTTLE.record(name, ok=ok and account is not None)
    if not ok or account is None:
        raise LoginRefused("Wrong user name or password.")
    return User(name=name, role=account.role, logged_in_at=time.time())


def sso_user(users: Users, email: str | None) -> User | None:
    """The user an identity provider vouched for, if the users file gives the address a role."""
    if not email:
        return None
    role = users.sso_roles.get(email.lower())
    return User(name=email, role=role, logged_in_at=time.time()) if role else None


def session_user(state: object) -> User | None:
    """The logged-in user of this browser session, or None (also when the session expired)."""
    user = getattr(state, "get", lambda _k: None)(SESSION_KEY)
    if not isinstance(user, User):
        return None
    if time.time() - user.logged_in_at > SESSION_HOURS * 3600:
        return None
    return user
