"""Procedure articles no other test names, each on hand-made events: the 7x7 deal face down
(PGP-A10c), one player per betting zone at Tripóker and Hold'em (TCP-A9a, ALL-2), and a voided
round returning every bet (PGP-A10e, ALL-5)."""

from __future__ import annotations

from typing import Any

from consumers.rounds import finish_round
from consumers.state import TableState
from events import Event
from events.models import Game
from games.pai_gow import checks as pai_gow_checks
from games.pai_gow.rules import serpentine_deal_order
from games.registry import GAMES
from rules import procedure
from tests.rules.test_procedure import _deal, bet, ev, rules_of


def _serpentine() -> dict[int, list[int]]:
    order: dict[int, list[int]] = {g: [] for g in range(1, 8)}
    for place, (group, _card) in enumerate(serpentine_deal_order(), start=1):
        order[group].append(place)
    return order


def test_pgp_a10c_every_group_is_dealt_face_down() -> None:
    deal = _deal(_serpentine())
    assert pai_gow_checks.pai_gow_deal(deal) == []
    group_3 = next(i for i, e in enumerate(deal) if getattr(e, "group", None) == 3)
    deal[group_3] = deal[group_3].model_copy(update={"face_up": True})
    found = pai_gow_checks.pai_gow_deal(deal)
    assert rules_of(found) == ["PGP-A10c"]
    assert found[0].check == "deal_face_down" and found[0].evidence == {"group": 3}


def test_tcp_a9a_one_player_two_zones_at_tripoker() -> None:
    rules = GAMES[Game.TRIPOKER].table_rules
    events = [bet(1, ref="P1", game="tripoker"), bet(3, ref="P1", game="tripoker")]
    found = procedure.one_player_per_zone(rules, events)
    assert rules_of(found) == ["TCP-A9a"] and found[0].evidence["seats"] == [1, 3]
    # Two players, or one player's two bets in one zone (ante and pair plus), are allowed.
    ok = [bet(1, ref="P1", game="tripoker"), bet(1, ref="P1", game="tripoker")]
    assert procedure.one_player_per_zone(rules, [*ok, bet(2, ref="P2", game="tripoker")]) == []


def test_all2_one_player_two_zones_at_holdem() -> None:
    rules = GAMES[Game.HOLDEM].table_rules
    events = [bet(2, ref="P9", game="holdem"), bet(5, ref="P9", game="holdem")]
    assert rules_of(procedure.one_player_per_zone(rules, events)) == ["ALL-2"]
    anonymous = [bet(2, game="holdem"), bet(5, game="holdem")]  # no player reference: unknown
    assert procedure.one_player_per_zone(rules, anonymous) == []


def _voided(game: Game, **started: Any) -> list[dict[str, Any]]:
    slug = game.value
    events: list[Event] = [
        ev("round_started", slug, deck_id="D1", dealer_id="DLR-1", **started),
        bet(1, 5_000, game=slug),
        bet(2, 2_500, game=slug),
        ev("round_voided", slug, reason="misdeal"),
    ]
    state = TableState(table_id="T-1", game=slug, round_id="R-1", round_events=events)
    result = finish_round(state, abandoned=False)
    assert result.round_row["status"] == "voided"
    return list(result.rows["settlements"])


def test_pgp_a10e_an_error_in_the_deal_voids_the_round_and_returns_every_bet() -> None:
    rows = _voided(Game.PAI_GOW, banker_position=0)
    assert [(r["seat"], r["wager_cents"], r["outcome"]) for r in rows] == [
        (1, 5_000, "returned"),
        (2, 2_500, "returned"),
    ]
    assert all(r["net_cents"] == r["house_result_cents"] == r["payout_cents"] == 0 for r in rows)
    assert all(r["rule_ids"] == ["PGP-A10e", "ALL-5"] for r in rows)


def test_all5_a_voided_round_returns_every_bet_at_tripoker_and_holdem() -> None:
    for game in (Game.TRIPOKER, Game.HOLDEM):
        rows = _voided(game)
        assert [(r["seat"], r["outcome"], r["net_cents"]) for r in rows] == [
            (1, "returned", 0),
            (2, "returned", 0),
        ], game
        assert all(r["rule_ids"] == ["ALL-5"] for r in rows)
