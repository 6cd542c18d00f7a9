"""Drawing helpers every page shares: the role check, the filter sidebar, money and rate
formats, and tables shown with their CSV download (in exact céntimos).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import pandas as pd
import streamlit as st

from dashboards import acks, auth, data, sessions

DEFAULT_DAYS = 7
DOWNLOAD_TOKEN = "croupier_download_token"  # session state: this session's CSV name token


# Money needs room: metric values a little smaller than Streamlit's default, so a figure like
# "S/ 2,530,615.00" fits a fifth of the page. A fixed style, never built from data.
STYLE = "<style>[data-testid='stMetricValue'] { font-size: 1.35rem; }</style>"


def sso_configured() -> bool:
    """True when `.streamlit/secrets.toml` configures an identity provider for `st.login`."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, st.errors.StreamlitSecretNotFoundError):
        return False


def logged_in_user() -> auth.User | None:
    """This session's user: from the password login (or its session cookie, after a reload),
    checked against the users file at every run; or from single sign-on when the users file
    gives the identity provider's e-mail address a role."""
    user = auth.session_user(st.session_state)
    if user is not None and (user.sid is not None or user.sso):
        user = _still_valid(user)
    if user is None:
        st.session_state.pop(auth.SESSION_KEY, None)
        user = _cookie_user()
    if user is None and sso_configured() and st.user.get("is_logged_in", False):
        user = auth.sso_user(auth.load_users(), str(st.user.get("email") or ""))
    if user is not None:
        st.session_state[auth.SESSION_KEY] = user
    return user


def _still_valid(user: auth.User) -> auth.User | None:
    """A user at each run, with the role the users file gives now: a password user not logged
    out (in another tab too) and still in the file; a single sign-on user still signed in at
    the identity provider, the address still given a role."""
    if user.sso:
        if not (sso_configured() and st.user.get("is_logged_in", False)):
            return None
        now = auth.sso_user(auth.load_users(), str(st.user.get("email") or ""))
        return None if now is None else replace(user, name=now.name, role=now.role)
    if acks.session_ended(acks.default_path(), str(user.sid)):
        return None
    account = auth.load_users().accounts.get(user.name)
    if account is None:
        return None
    return user if account.role is user.role else replace(user, role=account.role)


def _cookie_user() -> auth.User | None:
    """The user of this browser's session cookie: signed, unexpired, not ended, and an account
    of the users file as it is now (its role from there)."""
    cookie = st.context.cookies.get(sessions.COOKIE)
    if not isinstance(cookie, str) or not cookie:
        return None
    session = sessions.verify(cookie, sessions.load_key())
    if session is None or acks.session_ended(acks.default_path(), session.sid):
        return None
    account = auth.load_users().accounts.get(session.name)
    if account is None:
        return None
    started = session.expires_at - auth.SESSION_HOURS * 3600
    return auth.User(name=session.name, role=account.role, logged_in_at=started, sid=session.sid)


def signed_in(user: auth.User) -> None:
    """After a password sign-in: this session's user, and the browser sent to swap a one-time
    code for the session cookie (so that a reload keeps the user signed in)."""
    session = sessions.new_session(user.name, auth.SESSION_HOURS)
    st.session_state[auth.SESSION_KEY] = replace(user, sid=session.sid)
    code = sessions.HANDOFFS.issue(session)
    _go(f"{sessions.SESSION_ROUTE}?code={code}")


def _go(path: str) -> None:
    """Send the browser to `path` of this server (a full page load)."""
    # Once per page: a redraw of the element must not start a second navigation.
    st.html(
        "<script>if (!window.__croupierGoing) { window.__croupierGoing = true; "
        f"window.location.replace({json.dumps(path)}); }}</script>",
        unsafe_allow_javascript=True,
    )


def client_address() -> str:
    """Where this session's browser connects from (see auth.client_address)."""
    from infra.config import get_settings

    trusted = get_settings().dashboard_trusted_proxies
    headers = st.context.headers
    forwarded = headers.get("X-Forwarded-For") if trusted else None
    extra = {"X-Forwarded-For": forwarded} if isinstance(forwarded, str) else {}
    return auth.client_address(st.context.ip_address, extra, trusted)


def log_out() -> None:
    """End the session: for good, cookie included (the logout route), or single sign-on's."""
    user = st.session_state.pop(auth.SESSION_KEY, None)
    if sso_configured() and st.user.get("is_logged_in", False):
        st.logout()
    elif isinstance(user, auth.User) and user.sid is not None:
        acks.end_session(acks.default_path(), sid=user.sid, name=user.name)  # cookie dead now
        st.session_state[_LEAVING] = True  # and the logout route clears it


_LEAVING = "croupier_logging_out"


def leave_if_logging_out() -> None:
    """After Log out: the browser goes to the logout route, which ends the session's cookie."""
    if st.session_state.pop(_LEAVING, False):
        _go(sessions.LOGOUT_ROUTE)
        st.stop()


def require(page: str) -> auth.User:
    """The logged-in user, checked anew (`logged_in_user`: also in a fragment's rerun, which
    runs neither the router nor the page's top), if the role may see `page`; otherwise a
    notice and nothing more."""
    user = logged_in_user()
    if user is None or not user.may_see(page):
        st.warning("This page is not available to you. Log in with an account that may see it.")
        st.stop()
    return user


def options_or_stop() -> data.FilterOptions:
    """What can be filtered on; when the marts are not built yet, say how to build them."""
    try:
        return data.filter_options()
    except data.NoMarts as exc:
        st.info(f"No data to show yet: {plain(exc)}.")
        st.stop()


def build_caption() -> None:
    """Which build the page shows: the last successful one (its marts snapshot), whole."""
    info = data.build_info()
    if info is not None:
        shown = (
            f"marts snapshot {info.marts_snapshot_id}"
            if info.marts_snapshot_id is not None
            else "latest marts snapshot: no build published yet"
        )
        st.caption(
            f"Marts built {info.finished_at:%Y-%m-%d %H:%M} UTC from lake snapshot "
            f"{info.lake_snapshot_id} ({shown}). "
            + ("Money in soles (S/); times in UTC." if data.viewer().money else "Times in UTC.")
        )


def filters(
    options: data.FilterOptions,
    *,
    page: str,
    dims: Sequence[str] = ("games", "tables", "dealers", "shifts"),
    table_games: Sequence[str] = (),
) -> data.Filters:
    """The sidebar filters of a page (date range first; the latest DEFAULT_DAYS by default)."""
    side = st.sidebar
    side.subheader("Filters")
    default_start = max(options.first_day, options.last_day - timedelta(days=DEFAULT_DAYS - 1))
    picked = side.date_input(
        "Casino days",
        value=(default_start, options.last_day),
        min_value=options.first_day,
        max_value=options.last_day,
        key=f"{page}_days",
        help="A casino day runs from 06:00 to 06:00 local time.",
    )
    start, end = _range(picked, default_start, options.last_day)
    games: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    dealers: tuple[str, ...] = ()
    shifts: tuple[int, ...] = ()
    if "games" in dims:
        games = tuple(
            side.multiselect(
                "Game",
                list(options.games),
                format_func=lambda g: options.games[g],
                key=f"{page}_games",
            )
        )
    if "tables" in dims:
        allowed = games or tuple(table_games)
        choices = [t for t, g in options.tables.items() if not allowed or g in allowed]
        tables = tuple(side.multiselect("Table", choices, key=f"{page}_tables"))
    if "dealers" in dims:
        dealers = tuple(side.multiselect("Dealer", list(options.dealers), key=f"{page}_dealers"))
    if "shifts" in dims:
        shifts = tuple(
            side.multiselect(
                "Shift",
                list(options.shifts),
                format_func=lambda n: f"{n} · {options.shifts[n]}",
                key=f"{page}_shifts",
            )
        )
    return data.Filters(
        start=start, end=end, games=games, tables=tables, dealers=dealers, shifts=shifts
    )


def _range(picked: object, default_start: date, default_end: date) -> tuple[date, date]:
    """A date_input range while the user is still picking may hold one date only."""
    if isinstance(picked, tuple | list) and len(picked) == 2:
        return picked[0], picked[1]
    if isinstance(picked, tuple | list) and len(picked) == 1:
        return picked[0], picked[0]
    if isinstance(picked, date):
        return picked, picked
    return default_start, default_end


_MARKDOWN = re.compile(r"([!-/:-@\[-`{-~])")


def plain(text: object) -> str:
    """`text` escaped for Streamlit's markdown: ids and explanations come from the event
    stream, and a device must not be able to plant a link, an image or an icon in a page."""
    return _MARKDOWN.sub(r"\\\1", str(text))


def money(cents: Any) -> str:
    """Céntimos as soles, exactly: 123456 -> 'S/ 1,234.56' (integer arithmetic, no float)."""
    if cents is None or pd.isna(cents):
        return "–"
    value = round(float(cents)) if not isinstance(cents, int) else cents
    sign = "-" if value < 0 else ""
    soles, centimos = divmod(abs(int(value)), 100)
    return f"{sign}S/ {soles:,}.{centimos:02d}"


def pct(value: Any, digits: int = 2) -> str:
    if value is None or pd.isna(value):
        return "–"
    return f"{float(value) * 100:.{digits}f} %"


_RATES = ("_pct", "_rate", "accuracy", "compliance")


def _download_token() -> str:
    token = st.session_state.get(DOWNLOAD_TOKEN)
    if not isinstance(token, str):
        token = st.session_state[DOWNLOAD_TOKEN] = secrets.token_hex(8)
    return token


def table(frame: pd.DataFrame, *, name: str, labels: dict[str, str] | None = None) -> None:
    """Show `frame` (money in S/, rates in %) with a CSV download of the same rows, money kept
    in exact céntimos (`*_cents` columns)."""
    shown = frame.copy()
    config: dict[str, Any] = {}
    for column in frame.columns:
        label = (labels or {}).get(column, column.replace("_", " "))
        if column.endswith("_cents"):
            shown[column] = frame[column].astype("float64") / 100
            config[column] = st.column_config.NumberColumn(
                label.removesuffix(" cents") + " (S/)", format="%.2f"
            )
        elif column.endswith(_RATES):
            config[column] = st.column_config.NumberColumn(label, format="percent")
        elif column == "p_value":
            config[column] = st.column_config.NumberColumn(label, format="%.3g")
        elif pd.api.types.is_float_dtype(frame[column]):
            config[column] = st.column_config.NumberColumn(label, format="%.2f")
        else:
            config[column] = st.column_config.Column(label)
    st.dataframe(shown, hide_index=True, column_config=config, key=f"df_{name}")
    st.download_button(
        f"Download {name.replace('_', ' ')} (CSV)",
        frame.to_csv(index=False).encode(),
        # Streamlit names a download by a hash of its bytes and file name, served to anyone who
        # asks: a token of the session in the name keeps the address unguessable even when the
        # content can be guessed (a surveillance user knows every cell but the money).
        file_name=f"{name}-{_download_token()}.csv",
        mime="text/csv",
        key=f"csv_{name}",
        on_click="ignore",
    )
