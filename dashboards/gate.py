"""What the dashboards' web server answers before anyone has signed in.

Streamlit serves more than the app: Prometheus metrics (`/_stcore/metrics`: session counts,
page names), a script health check that runs the app, an agent API (`/_stcore/agent/*`), file
upload and custom-component endpoints. The app uses none of them, and none of them asks who is
asking. The gate answers only:

- `/_stcore/health`: liveness, for a load balancer or compose's health check (says "ok");
- `/_stcore/host-config`, `/_stcore/stream`: what the browser needs to show the sign-in page
  (the websocket the app runs on; behind it the app checks every session's user and role for
  every page);
- the front end's files (`/static/…`, the index page at any page path), the same for everyone;
- `/media/…`: files the app made for a signed-in session (CSV downloads), by unguessable id;
- Streamlit's own sign-in routes (`/auth/…`, `/oauth2callback`) for single sign-on, and ours
  that set and clear the session cookie (`/_croupier/session`, `/_croupier/logout`).

Anything else under `/_stcore/` or `/_croupier/`, and `/component/…`, gets 404, so a new
Streamlit endpoint is closed until someone opens it here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_CORE = frozenset(
    {"/_stcore/health", "/_stcore/host-config", "/_stcore/stream",
     "/_croupier/session", "/_croupier/logout"}
)  # fmt: skip
CLOSED_PREFIXES = ("/_stcore/", "/_croupier/", "/component/")


def is_open(path: str) -> bool:
    """True when the gate lets a request for `path` through."""
    path = "/" + path.lstrip("/")
    while "//" in path:
        path = path.replace("//", "/")
    if path in OPEN_CORE:
        return True
    return not path.startswith(CLOSED_PREFIXES) and path not in (
        "/_stcore",
        "/_croupier",
        "/component",
    )


class Gate:
    """ASGI middleware: 404 for every path `is_open` refuses, HTTP and websocket alike."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not is_open(str(scope.get("path", ""))):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 404,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": b"Not found\n"})
            return
        await self.app(scope, receive, send)
