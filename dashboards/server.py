"""The dashboards' web server, as `croupier dashboard` runs it (`streamlit run` of this file):
Streamlit's own server for the app in streamlit_app.py, behind the gate (dashboards/gate.py),
with the two routes of the session cookie (dashboards/sessions.py)."""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from dashboards import acks, sessions
from dashboards.gate import Gate


def _secure(request: Request) -> bool:
    """HTTPS to the browser: directly, or as a trusted proxy says (X-Forwarded-Proto)."""
    from infra.config import get_settings

    peer = request.client.host if request.client else None
    trusted = peer is not None and peer in get_settings().dashboard_trusted_proxies
    proto = request.headers.get("x-forwarded-proto", "").lower()
    return request.url.scheme == "https" or (trusted and proto == "https")


async def start_session(request: Request) -> RedirectResponse:
    """Swap a sign-in's one-time code for the session cookie, then back to the app."""
    session = sessions.HANDOFFS.redeem(request.query_params.get("code", ""))
    response = RedirectResponse("/", status_code=303)
    if session is not None:
        response.set_cookie(
            sessions.COOKIE,
            sessions.sign(session, sessions.load_key()),
            max_age=max(0, int(session.expires_at - sessions.now())),
            path="/",
            httponly=True,
            samesite="lax",
            secure=_secure(request),
        )
    return response


async def end_session(request: Request) -> RedirectResponse:
    """End the cookie's session for good and clear the cookie, then back to the sign-in."""
    cookie = request.cookies.get(sessions.COOKIE, "")
    session = sessions.verify(cookie, sessions.load_key()) if cookie else None
    if session is not None:
        acks.end_session(acks.default_path(), sid=session.sid, name=session.name)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(sessions.COOKIE, path="/", httponly=True, samesite="lax")
    return response


app = st.App(
    Path(__file__).with_name("streamlit_app.py"),
    routes=[
        Route(sessions.SESSION_ROUTE, start_session, methods=["GET"]),
        Route(sessions.LOGOUT_ROUTE, end_session, methods=["GET"]),
    ],
    middleware=[Middleware(Gate)],
)
