"""Croupier dashboards: the router. Until someone logs in it serves the login page alone; then
only the pages that user's role may see (dashboards/roles.toml), with a log-out button.
"""

from __future__ import annotations

import streamlit as st

from dashboards import ui

st.set_page_config(page_title="Croupier", page_icon=":material/casino:", layout="wide")

PAGES = {
    "floor": st.Page("app_pages/floor.py", title="Floor", icon=":material/table_restaurant:"),
    "revenue": st.Page("app_pages/revenue.py", title="Revenue", icon=":material/payments:"),
    "integrity": st.Page("app_pages/integrity.py", title="Integrity", icon=":material/policy:"),
    "dealers": st.Page("app_pages/dealers.py", title="Dealers", icon=":material/badge:"),
    "players": st.Page("app_pages/players.py", title="Players", icon=":material/visibility:"),
    "progressive": st.Page(
        "app_pages/progressive.py", title="Progressive", icon=":material/trending_up:"
    ),
    "round_explorer": st.Page(
        "app_pages/round_explorer.py", title="Round explorer", icon=":material/manage_search:"
    ),
    "sign_ins": st.Page("app_pages/sign_ins.py", title="Sign-ins", icon=":material/lock:"),
}

st.html(ui.STYLE)
ui.leave_if_logging_out()
user = ui.logged_in_user()
if user is None:
    login = st.Page("app_pages/login.py", title="Log in", icon=":material/login:")
    st.navigation([login], position="hidden").run()
else:
    with st.sidebar:
        st.markdown(f"**{ui.plain(user.name)}** · {user.role.value}")
        st.button("Log out", on_click=ui.log_out, icon=":material/logout:")
    st.navigation([page for key, page in PAGES.items() if user.may_see(key)]).run()
