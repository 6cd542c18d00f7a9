"""Sign-in sessions that survive a reload: a signed, expiring, HttpOnly cookie.

Streamlit keeps a session only as long as its websocket: a reload used to sign the user out.
After a password sign-in (checked in the app, throttled, logged) the app hands the browser a
one-time code, valid for HANDOFF_S, and sends it to `/_croupier/session`, a route of the
dashboards' own server (dashboards/server.py), which swaps it for the cookie and sends the
browser back to the app. A script cannot set an HttpOnly cookie; the route can, so no script in
the page can read the session.

The cookie, `croupier_session`, carries the session id, the user name and the expiry, signed
with HMAC-SHA256 under a key kept in `<data_dir>/dashboards/session.key` (made once, mode 600).
Every app run checks signature, expiry and that the session was not ended, and takes the role
from the users file as it is now (a user removed from it is out at the next run). Logging out
ends the session for good (`acks.end_session`: kept in the dashboards' audit file, so a
copied cookie stays dead across restarts) and `/_croupier/logout` clears the cookie.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

COOKIE = "croupier_session"
HANDOFF_S = 60.0
SESSION_ROUTE, LOGOUT_ROUTE = "/_croupier/session", "/_croupier/logout"


@dataclass(frozen=True, kw_only=True)
class Session:
    sid: str
    name: str
    expires_at: float


def key_path() -> Path:
    from infra.config import get_settings

    return get_settings().data_dir / "dashboards" / "session.key"


def now() -> float:
    return time.time()


def load_key(path: Path | None = None) -> bytes:
    path = path if path is not None else key_path()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            pass
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
    key = path.read_bytes()
    if len(key) < 32:
        raise ValueError(f"{path}: a session key of at least 32 bytes is expected")
    return key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(session: Session, key: bytes) -> str:
    body = _b64(
        json.dumps(
            {"sid": session.sid, "name": session.name, "exp": session.expires_at},
            separators=(",", ":"),
        ).encode()
    )
    mac = hmac.new(key, f"v1.{body}".encode(), hashlib.sha256).digest()
    return f"v1.{body}.{_b64(mac)}"


def verify(cookie: str, key: bytes, *, at: float | None = None) -> Session | None:
    """The session a cookie carries, or None when it is malformed, forged or expired."""
    parts = cookie.split(".")
    if len(parts) != 3 or parts[0] != "v1" or len(cookie) > 2_000:
        return None
    try:
        mac = _unb64(parts[2])
        expected = hmac.new(key, f"v1.{parts[1]}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(mac, expected):
            return None
        fields = json.loads(_unb64(parts[1]))
        session = Session(
            sid=str(fields["sid"]), name=str(fields["name"]), expires_at=float(fields["exp"])
        )
    except (ValueError, KeyError, TypeError):
        return None
    return session if session.expires_at > (time.time() if at is None else at) else None


def new_session(name: str, hours: float) -> Session:
    return Session(sid=secrets.token_urlsafe(18), name=name, expires_at=time.time() + hours * 3600)


class Handoffs:
    """One-time codes from a sign-in in the app to the cookie route (one server process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._codes: dict[str, tuple[Session, float]] = {}

    def issue(self, session: Session) -> str:
        code = secrets.token_urlsafe(24)
        now = time.monotonic()
        with self._lock:
            self._codes = {c: v for c, v in self._codes.items() if v[1] > now}
            self._codes[code] = (session, now + HANDOFF_S)
        return code

    def redeem(self, code: str) -> Session | None:
        with self._lock:
            entry = self._codes.pop(code, None)
        if entry is None or entry[1] < time.monotonic():
            return None
        return entry[0]


HANDOFFS = Handoffs()
