"""Player archetypes (`croupier simulate --players`): parsing, the truth records, each archetype's
decisions, the hole-carder's edge, and the night unchanged without the option."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from croupier.cli import main
from events import Game, InvalidEvent, parse_event
from events.models import Decision
from games.holdem.profile import HoldemProfile
from games.holdem.strategy import full_information_calls, legitimate_calls
from games.simulation.players import Archetype, PlayerRecord, parse_players
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import (
    TripokerRound,
    TripokerSeat,
    plays_queen_six_four,
    settle_tripoker,
)
from games.tripoker.strategy import full_information_plays, strategy
from producers.simulator import FaultRecord, simulate
from rules.cards import parse_cards

# ---- the option ---------------------------------------------------------------------------------


def test_parse_players_reads_shares_and_the_hole_carders_p() -> None:
    mix = parse_players("hole-carder:0.02, basic:0.3,hole-carder@0.25:0.1,flash-partner:0.05")
    assert [(s.archetype, s.share, s.sees) for s in mix.shares] == [
        (Archetype.HOLE_CARDER, 0.02, 1.0),
        (Archetype.BASIC, 0.3, 0.0),
        (Archetype.HOLE_CARDER, 0.1, 0.25),
        (Archetype.FLASH_PARTNER, 0.05, 1.0),
    ]
    assert mix.has_flash_partners
    assert mix.to_json() == {
        "hole-carder": 0.02,
        "basic": 0.3,
        "hole-carder@0.25": 0.1,
        "flash-partner": 0.05,
    }
    assert not parse_players("typical:1,exposed-optimal:0").has_flash_partners


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no players given"),
        ("card-counter:0.1", "unknown archetype 'card-counter'"),
        ("basic", "expected name:share"),
        ("basic:1.5", "share 1.5 is not between 0 and 1"),
        ("basic:-0.1", "is not between 0 and 1"),
        ("basic:lots", "'lots' is not a number"),
        ("basic:nan", "is not between 0 and 1"),
        ("basic:0.6,hole-carder:0.5", "add up to 1.1, more than 1"),
        ("hole-carder@1.2:0.1", "P 1.2 is not between 0 and 1"),
        ("hole-carder@x:0.1", "P 'x' is not a number"),
        ("basic@0.5:0.1", "only hole-carder takes @P"),
        ("basic:0.1,basic:0.2", "basic named twice"),
    ],
)
def test_parse_players_refuses_bad_values(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_players(text)


def test_bad_players_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    out = str(tmp_path / "x.jsonl")
    cases = [
        ("card-counter:0.1", "unknown archetype 'card-counter'"),
        ("basic:2", "share 2 is not between 0 and 1"),
        ("basic:0.7,hole-carder:0.4", "the shares add up to 1.1, more than 1"),
        ("hole-carder@1.5:0.1", "P 1.5 is not between 0 and 1"),
    ]
    for value, message in cases:
        result = CliRunner().invoke(main, ["simulate", "--out", out, "--players", value])
        assert result.exit_code == 2, (value, result.output)
        assert "--players" in result.output and message in result.output, result.output


# ---- the night without archetypes --------------------------------------------------------------

# sha256 of the messages (each line + "\n") the simulator wrote BEFORE archetypes existed, with
# `croupier simulate --tables-per-game 1 --hours 3 --seed 123 --faults none` and
# `--tables-per-game 2 --hours 2 --seed 7` (default faults; also its --truth file). A change
# of the simulator that is meant to change the night updates these.
_BEFORE = {
    "night-123": "76850234d6fa0c3300935536644b9de4c98fa7af22c59d4513bbb6f582427d99",
    "night-7": "55a137a28c93a7f8082a0ef73f439843adbce829d399f9fcdb46731c1c9cc100",
    "truth-7": "15760ba17b6f95b66558ddd24e2d4133debf6e8ce28dd51fc6b2663b66d11371",
}


def _digest(lines: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line + b"\n")
    return digest.hexdigest()


def test_without_players_the_night_is_the_one_made_before_archetypes() -> None:
    night = simulate(tables=1, hours=3, seed=123, faults={})
    assert _digest(m.value for m in night) == _BEFORE["night-123"]
    truth: list[FaultRecord] = []
    night = simulate(tables=2, hours=2, seed=7, on_fault=truth.append)
    assert _digest(m.value for m in night) == _BEFORE["night-7"]
    assert _digest(r.to_json().encode() for r in truth) == _BEFORE["truth-7"]


def test_the_mix_gives_each_archetype_its_share() -> None:
    mix = parse_players("basic:0.5,hole-carder:0.25")
    rng = random.Random(1)
    drawn = Counter(
        share.archetype if share else None for share in (mix.draw(rng) for _ in range(4_000))
    )
    assert 1_850 < drawn[Archetype.BASIC] < 2_150
    assert 900 < drawn[Archetype.HOLE_CARDER] < 1_100
    assert 900 < drawn[None] < 1_100  # typical


def test_all_typical_players_change_nothing_but_the_truth_log() -> None:
    notes: list[PlayerRecord] = []
    plain = [m.value for m in simulate(tables=1, hours=1, seed=11)]
    typical = simulate(
        tables=1, hours=1, seed=11, players=parse_players("typical:1"), on_player=notes.append
    )
    assert [m.value for m in typical] == plain
    assert notes and {n.kind for n in notes} == {"player"}
    assert {n.fields["archetype"] for n in notes} == {"typical"}


def _table_of_the_night(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Who sat where with what bet and which cards: what the players' choices must not change
    (sorted and once each: the stream faults, drawn per message, land elsewhere when a choice
    changes how many messages a round has, e.g. a Hold'em round every seat folds)."""
    kinds = {"bet_placed", "cards_dealt", "dealer_changed", "round_started"}
    keys = ("seat", "spot", "amount_cents", "player_ref", "cards", "dealer_id")
    return sorted(
        {
            (e["table_id"], str(e["round_id"]), e["event_type"], *(str(e.get(k)) for k in keys))
            for e in events
            if e["event_type"] in kinds
        }
    )


def _valid(night: Any) -> list[dict[str, Any]]:
    events = []
    for message in night:
        try:
            parse_event(message.value)
        except InvalidEvent:  # a malformed message (a fault)
            continue
        events.append(json.loads(message.value))
    return events


def test_archetypes_change_no_card_bet_or_player_seated() -> None:
    mix = parse_players("hole-carder@0.5:0.2,exposed-optimal:0.2,flash-partner:0.2")
    plain = _valid(simulate(tables=1, hours=1, seed=8, faults={}))
    mixed = _valid(simulate(tables=1, hours=1, seed=8, faults={}, players=mix))
    assert _table_of_the_night(mixed) == _table_of_the_night(plain)

    def decided(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        kept = ("player_decided", "hand_set")
        return [(e["round_id"], e["seat"], str(e)) for e in events if e["event_type"] in kept]

    assert decided(plain) != decided(mixed)  # but the players' choices
    # With every fault on, two mixes of the same shares seat the same players on the same cards.
    notes: dict[str, list[PlayerRecord]] = {"a": [], "b": []}
    a = simulate(tables=1, hours=1, seed=8, players=mix, on_player=notes["a"].append)
    other = parse_players("basic:0.2,hole-carder:0.2,typical:0.2")
    b = simulate(tables=1, hours=1, seed=8, players=other, on_player=notes["b"].append)
    assert _table_of_the_night(_valid(a)) == _table_of_the_night(_valid(b))
    special = {
        name: [n.fields["player_ref"] for n in notes[name] if n.kind == "player"] for name in notes
    }
    assert special["a"] == special["b"]
    pairs = Counter(
        (x.fields["archetype"], y.fields["archetype"])
        for x, y in zip(
            [n for n in notes["a"] if n.kind == "player"],
            [n for n in notes["b"] if n.kind == "player"],
            strict=True,
        )
    )
    assert set(pairs) == {
        ("hole-carder", "basic"),
        ("exposed-optimal", "hole-carder"),
        ("flash-partner", "typical"),
        ("typical", "typical"),
    }


# ---- reading a night back ----------------------------------------------------------------------


def _events(night: Any) -> list[dict[str, Any]]:
    return [json.loads(m.value) for m in night]


def _rounds(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    rounds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        if event["round_id"]:
            rounds[event["round_id"]].append(event)
    return rounds


def _night(
    game: Game, players: str, *, tables: int, hours: float, seed: int = 5
) -> tuple[list[dict[str, Any]], list[PlayerRecord]]:
    notes: list[PlayerRecord] = []
    night = simulate(
        tables={game: tables},
        hours=hours,
        seed=seed,
        faults={},
        players=parse_players(players),
        on_player=notes.append,
    )
    return _events(night), notes


def _archetypes(notes: list[PlayerRecord]) -> dict[str, str]:
    return {n.fields["player_ref"]: n.fields["archetype"] for n in notes if n.kind == "player"}


def _tripoker_decisions(events: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    """Each ante decision with what it was taken on: hand, dealer's cards, stakes, player."""
    for round_id, round_events in _rounds(events).items():
        hands: dict[int, tuple[int, ...]] = {}
        refs: dict[int, str] = {}
        antes: dict[int, int] = {}
        pair_plus: dict[int, int] = {}
        dealer: tuple[int, ...] = ()
        for event in round_events:
            kind = event["event_type"]
            if kind == "bet_placed":
                refs[event["seat"]] = event["player_ref"]
                stakes = antes if event["spot"] == "ante" else pair_plus
                stakes[event["seat"]] = event["amount_cents"]
            elif kind == "cards_dealt" and event["recipient"] == "seat":
                hands[event["seat"]] = parse_cards(event["cards"])
            elif kind == "dealer_revealed":
                dealer = parse_cards(event["cards"])
        for event in round_events:
            if event["event_type"] == "player_decided":
                seat = event["seat"]
                yield {
                    "round_id": round_id,
                    "seat": seat,
                    "player_ref": refs[seat],
                    "hand": hands[seat],
                    "dealer": dealer,
                    "ante": antes[seat],
                    "pair_plus": pair_plus.get(seat, 0),
                    "plays": event["decision"] == "play",
                }


def _net_by_player(events: list[dict[str, Any]]) -> Counter[str]:
    """Each player's net winnings (céntimos) from the payouts recorded (no payment faults)."""
    net: Counter[str] = Counter()
    for round_events in _rounds(events).values():
        refs = {e["seat"]: e["player_ref"] for e in round_events if e["event_type"] == "bet_placed"}
        for e in round_events:
            if e["event_type"] == "payout_recorded":
                net[refs[e["seat"]]] += e["paid_cents"] - e["collected_cents"]
    return net


def _settled_net(profile: TripokerProfile, decision: dict[str, Any], plays: bool) -> int:
    seat = TripokerSeat(
        seat=1,
        ante_cents=decision["ante"],
        pair_plus_cents=decision["pair_plus"],
        cards=decision["hand"],
        decision=Decision.PLAY if plays else Decision.FOLD,
    )
    game = TripokerRound(round_id="-", dealer_cards=decision["dealer"], seats=(seat,))
    return sum(line.net_cents for line in settle_tripoker(game, profile).settlements)


# ---- Tripóker ----------------------------------------------------------------------------------

PE_2005 = TripokerProfile.load("tripoker/pe-2005")


def test_a_tripoker_hole_carder_takes_the_full_information_choice_and_wins() -> None:
    # ~2,200 rounds at two tables, every player a hole-carder (P = 1); then the same night with
    # every player basic: the same players, bets and cards (the archetypes decide otherwise
    # but draw nothing from the table's generator).
    carders, notes = _night(Game.TRIPOKER, "hole-carder:1", tables=2, hours=20)
    basics, basic_notes = _night(Game.TRIPOKER, "basic:1", tables=2, hours=20)
    archetypes = _archetypes(notes)
    assert set(archetypes.values()) == {"hole-carder"}
    assert _archetypes(basic_notes).keys() == archetypes.keys()
    players = [n.fields for n in notes if n.kind == "player"]
    assert {p["sees_hidden_probability"] for p in players} == {1.0}
    decisions = list(_tripoker_decisions(carders))
    assert len({d["round_id"] for d in decisions}) > 2_000
    hidden = {
        (n.fields["round_id"], n.fields["seat"]): n.fields
        for n in notes
        if n.kind == "hidden_knowledge"
    }
    assert len(hidden) == len(decisions)  # every decision is logged as taken knowing
    better_known = 0
    for d in decisions:
        args = (d["hand"], d["dealer"], d["ante"], d["pair_plus"])
        assert d["plays"] == full_information_plays(PE_2005, *args), d
        record = hidden[d["round_id"], d["seat"]]
        assert record["saw_hidden"] is True and record["player_ref"] == d["player_ref"]
        assert record["decision"] == ("play" if d["plays"] else "fold")
        legitimate = strategy(PE_2005)(*args)
        assert record["legitimate_decision"] == ("play" if legitimate else "fold")
        # The oracle: settled both ways with the dealer's cards, the choice is never the worse.
        played, folded = _settled_net(PE_2005, d, True), _settled_net(PE_2005, d, False)
        assert (played if d["plays"] else folded) == max(played, folded), d
        better_known += d["plays"] != legitimate
    assert better_known > 0.1 * len(decisions)
    for d in _tripoker_decisions(basics):
        assert d["plays"] == plays_queen_six_four(d["hand"]), d
    # Knowing the dealer's hand the player has a large edge (basic play, the house edge: its
    # sign over 2,000 rounds is luck with pair plus bets, the difference is not).
    carder_net = sum(_net_by_player(carders).values())
    basic_net = sum(_net_by_player(basics).values())
    wagered = sum(d["ante"] for d in decisions)
    assert carder_net > 0.1 * wagered > 0
    assert carder_net - basic_net > 0.1 * wagered


def test_tripoker_exposed_optimal_basic_and_flash_partner_decide_by_their_strategies() -> None:
    events, notes = _night(
        Game.TRIPOKER,
        "exposed-optimal:0.3,basic:0.3,flash-partner:0.3",
        tables=2,
        hours=6,
        seed=9,
    )
    archetypes = _archetypes(notes)
    assert set(archetypes.values()) == {"exposed-optimal", "basic", "flash-partner", "typical"}
    flashing = {n.table_id: n.fields["dealer_id"] for n in notes if n.kind == "flashing_dealer"}
    assert flashing.keys() == {"TP-01", "TP-02"}
    assert all(
        n.fields["flashing_dealer"] == flashing[n.table_id]
        for n in notes
        if n.kind == "player" and n.fields["archetype"] == "flash-partner"
    )
    dealers = {e["round_id"]: e["dealer_id"] for e in events if e["event_type"] == "round_started"}
    hidden = {
        (n.fields["round_id"], n.fields["seat"]) for n in notes if n.kind == "hidden_knowledge"
    }
    plays = strategy(PE_2005)
    seen: Counter[tuple[str, bool]] = Counter()
    for d in _tripoker_decisions(events):
        archetype = archetypes[d["player_ref"]]
        args = (d["hand"], d["dealer"], d["ante"], d["pair_plus"])
        knows = (d["round_id"], d["seat"]) in hidden
        if archetype == "exposed-optimal":
            assert d["plays"] == plays(*args) and not knows
        elif archetype == "basic":
            assert d["plays"] == plays_queen_six_four(d["hand"]) and not knows
        elif archetype == "flash-partner":
            table = d["round_id"][:5]
            assert knows == (dealers[d["round_id"]] == flashing[table])
            expected = full_information_plays(PE_2005, *args) if knows else None
            assert d["plays"] == (expected if knows else plays_queen_six_four(d["hand"]))
        else:
            assert not knows
        seen[archetype, knows] += 1
    assert seen["flash-partner", True] > 0 and seen["flash-partner", False] > 0
    assert seen["exposed-optimal", False] > 0 and seen["basic", False] > 0


def test_a_hole_carder_with_p_sees_about_that_share_of_rounds() -> None:
    events, notes = _night(Game.TRIPOKER, "hole-carder@0.3:1", tables=1, hours=10, seed=2)
    decisions = list(_tripoker_decisions(events))
    hidden = [n for n in notes if n.kind == "hidden_knowledge"]
    assert {n.fields["sees_hidden_probability"] for n in notes if n.kind == "player"} == {0.3}
    share = len(hidden) / len(decisions)
    assert 0.25 < share < 0.35, share  # ~1,500 decisions: 5 standard errors either way


# ---- Hold'em and Pai Gow -----------------------------------------------------------------------


def test_holdem_archetypes_call_by_their_strategies() -> None:
    profile = HoldemProfile.load("holdem/pe-2007")
    events, notes = _night(Game.HOLDEM, "hole-carder:0.5,basic:0.3", tables=1, hours=1.5, seed=3)
    archetypes = _archetypes(notes)
    hidden = {
        (n.fields["round_id"], n.fields["seat"]) for n in notes if n.kind == "hidden_knowledge"
    }
    checked: Counter[str] = Counter()
    for round_id, round_events in _rounds(events).items():
        holes: dict[int, tuple[int, ...]] = {}
        refs: dict[int, str] = {}
        antes: dict[int, int] = {}
        flop: tuple[int, ...] = ()
        dealer: tuple[int, ...] = ()
        for e in round_events:
            kind = e["event_type"]
            if kind == "bet_placed" and e["spot"] == "ante":
                refs[e["seat"]], antes[e["seat"]] = e["player_ref"], e["amount_cents"]
            elif kind == "cards_dealt" and e["recipient"] == "seat":
                holes[e["seat"]] = parse_cards(e["cards"])
            elif kind == "cards_dealt" and e["recipient"] == "dealer":
                dealer = parse_cards(e["cards"])  # hidden from the table, not from the log
            elif kind == "community_dealt" and e["street"] == "flop":
                flop = parse_cards(e["cards"])
        for e in round_events:
            if e["event_type"] != "player_decided":
                continue
            seat = e["seat"]
            archetype, calls = archetypes[refs[seat]], e["decision"] == "call"
            hole, ante = holes[seat], antes[seat]
            if archetype == "hole-carder":
                assert (round_id, seat) in hidden
                assert calls == full_information_calls(profile, hole, flop, dealer, ante)
            elif archetype == "basic":
                assert (round_id, seat) not in hidden
                assert calls == legitimate_calls(profile, hole, flop, ante)
            checked[archetype] += 1
    assert checked["hole-carder"] > 10 and checked["basic"] > 5


def test_pai_gow_players_other_than_typical_set_by_the_house_way() -> None:
    events, notes = _night(Game.PAI_GOW, "basic:1", tables=1, hours=4, seed=1)
    assert set(_archetypes(notes).values()) == {"basic"}
    assert not [n for n in notes if n.kind == "hidden_knowledge"]
    decided = [e for e in events if e["event_type"] == "player_decided"]
    assert decided == []  # nobody surrenders
    typical, _ = _night(Game.PAI_GOW, "typical:1", tables=1, hours=4, seed=1)
    assert [e for e in typical if e["event_type"] == "player_decided"]  # typical players do


# ---- the CLI's truth file ----------------------------------------------------------------------


def test_simulate_writes_the_players_to_the_truth_file(tmp_path: Path) -> None:
    out, truth = tmp_path / "night.jsonl", tmp_path / "truth.jsonl"
    args = ["simulate", "--tables-per-game", "1", "--hours", "1", "--seed", "4", "--quiet"]
    players = "hole-carder:0.3,flash-partner:0.2,basic:0.2"
    result = CliRunner().invoke(
        main, [*args, "--players", players, "--out", str(out), "--truth", str(truth)]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["players"] == {"hole-carder": 0.3, "flash-partner": 0.2, "basic": 0.2}
    records = [json.loads(line) for line in truth.read_text().splitlines()]
    faults = [r for r in records if "kind" not in r]
    kinds = Counter(r["kind"] for r in records if "kind" in r)
    assert summary["faults"] == len(faults)
    assert summary["players_seated"] == kinds["player"] > 0
    assert summary["hidden_card_decisions"] == kinds["hidden_knowledge"] > 0
    assert kinds["flashing_dealer"] == 3  # one per table
    player = next(r for r in records if r.get("kind") == "player")
    assert set(player) >= {"kind", "game", "table", "player_ref", "archetype", "seat"}
    seen = next(r for r in records if r.get("kind") == "hidden_knowledge")
    assert set(seen) >= {"round_id", "seat", "player_ref", "saw_hidden", "dealer_id"}
    assert seen["saw_hidden"] is True
    # The players' archetypes are the truth of the night: its messages name the same players.
    refs = {json.loads(line).get("player_ref") for line in out.read_bytes().splitlines()[:5000]}
    assert {r["player_ref"] for r in records if r.get("kind") == "player"} & refs
