"""The dashboards' web server, as `croupier dashboard` runs it (`streamlit run` of this file):
Streamlit's own server for the app in streamlit_app.py, behind the gate (dashboards/gate.py)."""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from dashboards.gate import Gate

app = st.App(Path(__file__).with_name("streamlit_app.py"), middleware=[Middleware(Gate)])
