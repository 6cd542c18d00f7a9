"""Sign-ins: the refused sign-ins of the dashboards (managers only), newest first: when, which
account (a name that is no account's is not kept: it may be a password typed in the wrong
field), from which client address, why, and the wait it imposed on that client."""

from __future__ import annotations

import streamlit as st

from dashboards import acks, auth, ui

ui.require("sign_ins")
st.title("Refused sign-ins")
st.caption(
    f"After {auth.FREE_FAILURES} failed attempts, each further failure doubles the wait before "
    f"the next attempt is checked: up to {auth.CLIENT_MAX_WAIT_S:.0f} s for one client address "
    f"and account, and up to {auth.USER_MAX_WAIT_S:.0f} s for an account from any address, so "
    "nobody can lock another user out. Nothing here is ever deleted."
)
failures = acks.sign_in_failures(acks.default_path())
if failures.empty:
    st.info("No refused sign-in yet.")
else:
    by_account = (
        failures.fillna({"account": "(no such account)"})
        .groupby(["account", "client"], as_index=False)
        .agg(attempts=("entry_no", "count"), last=("attempted_at", "max"))
        .sort_values("last", ascending=False)
    )
    top = failures["client"].value_counts().head(5)
    st.markdown(
        f"**{len(failures):,}** refused sign-ins shown; most from: "
        + ", ".join(f"{ui.plain(client)} ({count:,})" for client, count in top.items())
    )
    st.subheader("By account and client")
    ui.table(by_account, name="sign-in failures by account")
    st.subheader("Every attempt")
    ui.table(failures, name="sign-in failures")
