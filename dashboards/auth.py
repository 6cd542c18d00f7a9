"""Who may see the dashboards: users with scrypt-hashed passwords and a role, from a TOML file.

The file is `$CROUPIER_DASHBOARD_USERS`, else `<data_dir>/dashboards/users.toml`; single sign-on
with `st.login` is offered too when `.streamlit/secrets.toml` has an `[auth]` section.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import os
import secrets
import threading
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
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
MAX_INPUT = 200
# Sign-in throttling: growing delays, never a lock. After FREE_FAILURES failed attempts, each
# further failure doubles the wait before the next attempt is even checked (1, 2, 4 ... s), up to
# CLIENT_MAX_WAIT_S for one client and one user name, and up to USER_MAX_WAIT_S for a user name
# from any client: a guesser at one address slows to one try per 5 minutes, while the most a
# stranger who knows a user name can do to that user elsewhere is a wait of a few seconds.
# Counts are forgotten FORGET_AFTER_S after the last failure.
FREE_FAILURES, CLIENT_MAX_WAIT_S, USER_MAX_WAIT_S, FORGET_AFTER_S = 3, 300.0, 8.0, 900.0


class Role(StrEnum):
    MANAGER = "manager"
    SURVEILLANCE = "surveillance"


PAGES = frozenset(
    {
        "floor",
        "revenue",
        "integrity",
        "dealers",
        "players",
        "progressive",
        "round_explorer",
        "sign_ins",
    }
)
MEASURES = frozenset({"money"})
ROLES_FILE = Path(__file__).with_name("roles.toml")


@dataclass(frozen=True)
class Grant:
    """What a role may see: its pages and the measures its figures may carry (roles.toml)."""

    pages: frozenset[str] = frozenset()
    measures: frozenset[str] = frozenset()

    @property
    def money(self) -> bool:
        return "money" in self.measures


NOTHING = Grant()


def load_grants(text: str, *, origin: str) -> dict[Role, Grant]:
    """Each role's grant from roles TOML; every role, page and measure must be known."""
    raw = tomllib.loads(text)
    if set(raw) != set(Role):
        raise ValueError(f"{origin}: roles {sorted(raw)}, expected {sorted(Role)}")
    grants: dict[Role, Grant] = {}
    for role, entry in raw.items():
        named = (
            [entry.get(key, []) for key in ("pages", "measures")] if isinstance(entry, dict) else []
        )
        if (
            not named
            or set(entry) - {"pages", "measures"}
            or not all(isinstance(n, list) and all(isinstance(x, str) for x in n) for n in named)
        ):
            raise ValueError(f"{origin}: [{role}] must hold lists `pages` and `measures` only")
        pages, measures = set(named[0]), set(named[1])
        if pages - PAGES or measures - MEASURES:
            raise ValueError(f"{origin}: [{role}] names an unknown page or measure")
        grants[Role(role)] = Grant(frozenset(pages), frozenset(measures))
    return grants


GRANTS: dict[Role, Grant] = load_grants(ROLES_FILE.read_text("utf-8"), origin=str(ROLES_FILE))


class UsersFileError(ValueError):
    """The users file is missing or malformed; the message names the file and the problem."""


@dataclass(frozen=True, kw_only=True)
class User:
    name: str
    role: Role
    logged_in_at: float
    sid: str | None = None  # the cookie session it came with (dashboards/sessions.py)
    sso: bool = False  # vouched for by the identity provider (st.login), not a password

    @property
    def grant(self) -> Grant:
        return GRANTS[self.role]

    def may_see(self, page: str) -> bool:
        return page in self.grant.pages


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
    from infra.config import get_settings

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


class Throttle:
    """Failed sign-ins per (client, user name) and per user name, and the wait they impose."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[tuple[str, ...], tuple[int, float]] = {}

    def wait_s(self, client: str, name: str) -> float:
        """Seconds before an attempt for `name` from `client` is checked (0: now)."""
        now = self._clock()
        with self._lock:
            return max(
                self._wait(("client", client, name), CLIENT_MAX_WAIT_S, now),
                self._wait(("user", name), USER_MAX_WAIT_S, now),
            )

    def record(self, client: str, name: str, *, ok: bool) -> None:
        now = self._clock()
        keys: tuple[tuple[str, ...], ...] = (("client", client, name), ("user", name))
        with self._lock:
            for key in keys:
                if ok:
                    self._failures.pop(key, None)
                    continue
                count, last = self._failures.get(key, (0, now))
                count = 0 if now - last > FORGET_AFTER_S else count
                self._failures[key] = (count + 1, now)
            if len(self._failures) > 100_000:  # a flood of names: drop what is forgotten
                stale = [k for k, (_, t) in self._failures.items() if now - t > FORGET_AFTER_S]
                for key in stale:
                    del self._failures[key]

    def _wait(self, key: tuple[str, ...], cap: float, now: float) -> float:
        count, last = self._failures.get(key, (0, now))
        if count <= FREE_FAILURES or now - last > FORGET_AFTER_S:
            return 0.0
        delay = min(cap, 2.0 ** (count - FREE_FAILURES - 1))
        return max(0.0, last + delay - now)


THROTTLE = Throttle()
# Checked when the name is unknown, so a wrong name costs as long as a wrong password.
_DUMMY_HASH = hash_password(secrets.token_urlsafe(12))


class LoginRefused(Exception):
    """Wrong name or password, or too many attempts; the message is safe to show."""


@dataclass(frozen=True, kw_only=True)
class Failure:
    """A refused sign-in, as the failures log keeps it: never the password, and the name typed
    only when it is an account's (a password typed into the name field stays unrecorded)."""

    name: str | None  # the account's name, None when the name is no account's
    client: str
    reason: str  # "wrong password", "unknown user name", "throttled"
    wait_s: float  # the wait imposed on that client for that name afterwards


def authenticate(
    users: Users,
    name: str,
    password: str,
    *,
    client: str = "unknown",
    throttle: Throttle | None = None,
    on_failure: Callable[[Failure], None] | None = None,
) -> User:
    """The user whose password this is, or `LoginRefused`. An attempt that comes before its
    wait is over is refused unchecked (so guessing gains nothing from it)."""
    throttle = throttle if throttle is not None else THROTTLE
    name = name.strip()[:MAX_INPUT]
    account = users.accounts.get(name)
    known = name if account is not None else None
    wait = throttle.wait_s(client, name)
    if wait > 0:
        if on_failure is not None:
            on_failure(Failure(name=known, client=client, reason="throttled", wait_s=wait))
        raise LoginRefused(f"Too many failed attempts: try again in {math.ceil(wait)} s.")
    ok = verify_password(password[:MAX_INPUT], account.password_hash if account else _DUMMY_HASH)
    throttle.record(client, name, ok=ok and account is not None)
    if not ok or account is None:
        if on_failure is not None:
            reason = "wrong password" if account is not None else "unknown user name"
            wait = throttle.wait_s(client, name)
            on_failure(Failure(name=known, client=client, reason=reason, wait_s=wait))
        raise LoginRefused("Wrong user name or password.")
    return User(name=name, role=account.role, logged_in_at=time.time())


def client_address(peer: str | None, headers: Mapping[str, str], trusted: Sequence[str]) -> str:
    """The address a sign-in came from: the connection's peer, or, when the peer is one of the
    `trusted` reverse proxies, the nearest untrusted address in its X-Forwarded-For header
    (the rightmost: the ones to its left are whatever the client chose to send)."""
    peer = peer if isinstance(peer, str) and peer else "unknown"
    if peer not in trusted:
        return peer
    forwarded = next((v for k, v in headers.items() if k.lower() == "x-forwarded-for"), "")
    for address in reversed([a.strip() for a in forwarded.split(",") if a.strip()]):
        if address not in trusted:
            return address[:MAX_INPUT]
    return peer


def sso_user(users: Users, email: str | None) -> User | None:
    """The user an identity provider vouched for, if the users file gives the address a role."""
    if not email:
        return None
    role = users.sso_roles.get(email.lower())
    return User(name=email, role=role, logged_in_at=time.time(), sso=True) if role else None


def session_user(state: object) -> User | None:
    """The logged-in user of this browser session, or None (also when the session expired)."""
    user = getattr(state, "get", lambda _k: None)(SESSION_KEY)
    if not isinstance(user, User):
        return None
    if time.time() - user.logged_in_at > SESSION_HOURS * 3600:
        return None
    return user
