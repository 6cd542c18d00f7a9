"""The Revenue page's "What if" panel (issue 17): a note naming the command while no comparison
is stored, then the stored comparison (`croupier what-if --store`, agg_what_if_daily), for
managers only; the normal build still passes and keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from croupier.cli import main
from dashboards import auth, data
from infra import lake as lakes
from infra.config import get_settings
from infra.dbt_worker import DbtWorker
from infra.marts import build_marts, connect_marts
from tests.dashboards.browser import MANAGER
from tests.dashboards.conftest import DemoStores
from tests.dashboards.test_pages import _logged_in, _metrics, _money, _nothing_wrong, _visit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def own_marts(
    demo_stores: DemoStores, tmp_path_factory: pytest.TempPathFactory, dbt: DbtWorker
) -> Path:
    """Marts of the demo lake of this module's own: storing a comparison changes them."""
    marts = tmp_path_factory.mktemp("what_if_marts") / "marts"
    build_marts(lakes.Lake(root=demo_stores.lake), marts, quiet=True, dbt=dbt)
    return marts


def _revenue(monkeypatch: pytest.MonkeyPatch, marts: Path) -> AppTest:
    monkeypatch.setenv("CROUPIER_MARTS_PATH", str(marts))
    get_settings.cache_clear()
    at = _visit(_logged_in(MANAGER), "revenue")
    _nothing_wrong(at)
    return at


def test_the_panel_shows_the_command_then_the_stored_comparison(
    dashboard_env: Path,
    demo_stores: DemoStores,
    own_marts: Path,
    monkeypatch: pytest.MonkeyPatch,
    dbt: DbtWorker,
) -> None:
    at = _revenue(monkeypatch, own_marts)
    notes = [i.value for i in at.info]
    assert any(data.WHAT_IF_COMMAND in note for note in notes), notes

    stored = CliRunner().invoke(
        main,
        ["what-if", "--lake", str(demo_stores.lake), "--marts", str(own_marts), "--profile",
         "tripoker/standard", "--store"],
    )  # fmt: skip
    assert stored.exit_code == 0, stored.output
    con = connect_marts(own_marts)
    try:
        row = con.execute(
            "SELECT sum(rounds), sum(handle_cents), sum(house_result_cents), "
            "sum(whatif_house_result_cents), sum(difference_cents) FROM agg_what_if_daily "
            "WHERE whatif_profile = 'tripoker/standard@v1'"
        ).fetchone()
    finally:
        con.close()
    assert row is not None and row[0] > 0
    rounds, handle, house, whatif, difference = (int(x) for x in row)
    assert difference == whatif - house

    at = _revenue(monkeypatch, own_marts)
    assert not any(data.WHAT_IF_COMMAND in i.value for i in at.info)
    shown = _metrics(at)
    assert shown["Handle recorded"] == _money(handle)
    assert shown["House result recorded"] == _money(house)
    assert shown["House result re-settled"] == _money(whatif)
    panel = next(df.value for df in at.dataframe if "whatif_profile" in df.value.columns)
    assert list(panel["whatif_profile"]) == ["tripoker/standard@v1"]
    assert int(panel["rounds"].iloc[0]) == rounds
    assert any("tripoker/standard@v1" in m.value.replace("\\", "") for m in at.markdown)

    # The normal build leaves the model out (it is built on request) and still passes; the
    # stored comparison stays in the marts.
    build_marts(lakes.Lake(root=demo_stores.lake), own_marts, quiet=True, dbt=dbt)
    at = _revenue(monkeypatch, own_marts)
    assert _metrics(at)["House result re-settled"] == _money(whatif)

    # A stored file that cannot be read is never overwritten unasked: a clear error, kept as is.
    stored_file = own_marts / "what_if" / "comparisons.parquet"
    stored_file.write_bytes(b"not parquet")
    again = CliRunner().invoke(
        main,
        ["what-if", "--lake", str(demo_stores.lake), "--marts", str(own_marts), "--profile",
         "tripoker/standard", "--store"],
    )  # fmt: skip
    assert again.exit_code == 1 and "cannot read the stored comparisons" in again.output
    assert stored_file.read_bytes() == b"not parquet"


def test_surveillance_never_gets_the_panel(dashboard_env: Path) -> None:
    """The panel lives on the Revenue page, which the router and the page refuse to
    surveillance (dashboards/roles.toml); its frame has money only, which redaction strips."""
    import time

    at = AppTest.from_file(str(ROOT / "dashboards" / "app_pages" / "revenue.py"))
    at.session_state[auth.SESSION_KEY] = auth.User(
        name="sam", role=auth.Role.SURVEILLANCE, logged_in_at=time.time()
    )
    at.run()
    assert not at.metric and not at.dataframe
    assert not any("What if" in s.value for s in at.subheader)
