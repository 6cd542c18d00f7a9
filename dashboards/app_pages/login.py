"""Login page: user name and password (scrypt-checked), or single sign-on when configured."""

from __future__ import annotations

import streamlit as st

from dashboards import acks, auth, ui

st.title("Croupier")
st.caption("Revenue and game integrity of the casino's tables. Log in to continue.")

with st.form("login", enter_to_submit=True):
    name = st.text_input("User name", key="login_name", max_chars=auth.MAX_INPUT)
    password = st.text_input(
        "Password", type="password", key="login_password", max_chars=auth.MAX_INPUT
    )
    submitted = st.form_submit_button("Log in", type="primary")

if submitted:
    try:
        user = auth.authenticate(
            auth.load_users(),
            name,
            password,
            client=ui.client_address(),
            on_failure=lambda failure: acks.record_sign_in_failure(acks.default_path(), failure),
        )
    except (auth.LoginRefused, auth.UsersFileError) as exc:
        st.error(str(exc))
    else:
        st.caption("Signing in…")
        ui.signed_in(user)

if ui.sso_configured():
    st.divider()
    st.button("Log in with single sign-on", on_click=st.login, icon=":material/key:")
