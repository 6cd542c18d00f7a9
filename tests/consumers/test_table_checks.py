"""The table-level procedure checks (consumers/table_checks.py) on hand-made events, one test
per article and game: each game's page numbers the same procedure its own way."""

from __future__ import annotations

from typing import Any

from consumers import table_checks
from consumers.state import TableState, apply_table_event
from events import Event
from tests.builders import hand_made


def ev(event_type: str, game: str, round_id: str | None = None, **fields: Any) -> Event:
    return hand_made(event_type, game=game, table_id="T-1", round_id=round_id, **fields)


def shuffle(game: str, deck: str = "D1") -> Event:
    return ev("shuffle_completed", game, deck_id=deck, method="manual")


def cut(game: str, deck: str = "D1") -> Event:
    return ev("cut_completed", game, deck_id=deck, by="dealer", depth=12)


def start(game: str, round_id: str, deck: str = "D1") -> Event:
    return ev("round_started", game, round_id, deck_id=deck, dealer_id="DLR-1")


def findings_at_starts(game: str, events: list[Event]) -> list[tuple[str, str, str]]:
    """Run the table checks the processor runs on each event, then apply it to the state, as
    the processor does; (round, rule, check) of every finding at a round's start."""
    state = TableState(table_id="T-1", game=game)
    # The deck was counted and washed before play: only the checks under test can fire.
    state.decks = {"D1": [0, 0, 1], "D2": [0, 0, 1]}
    state.needs_count = state.needs_wash = False
    state.dealt_decks = ["D1", "D2"]  # in play already: not new decks (PGP-A6, TCP-A6, THP-A6)
    return _run(state, events)


def _run(state: TableState, events: list[Event]) -> list[tuple[str, str, str]]:
    found = []
    for event in events:
        for f in table_checks.run(state, event):
            found.append((str(event.round_id), f.rule_id, f.check))
        apply_table_event(state, event)
    return found


def _shuffle_then_cut_rules(game: str) -> list[tuple[str, str, str]]:
    """Three rounds: shuffled and cut; neither; shuffled but not cut (from alternating decks,
    which Hold'em needs, THP-A2d, and the other games allow)."""
    return findings_at_starts(
        game,
        [
            shuffle(game, "D1"),
            cut(game, "D1"),
            start(game, "R1", "D1"),
            start(game, "R2", "D2"),
            shuffle(game, "D1"),
            start(game, "R3", "D1"),
        ],
    )


def test_pgp_a8a_shuffle_and_pgp_a8b_cut_before_every_pai_gow_round() -> None:
    assert _shuffle_then_cut_rules("pai_gow") == [
        ("R2", "PGP-A8a", "shuffle_before_round"),
        ("R3", "PGP-A8b", "cut_before_round"),
    ]


def test_tcp_a7_shuffle_then_cut_before_every_tripoker_round() -> None:
    assert _shuffle_then_cut_rules("tripoker") == [
        ("R2", "TCP-A7", "shuffle_before_round"),
        ("R3", "TCP-A7", "cut_before_round"),
    ]


def test_all4_shuffle_then_cut_before_every_holdem_round() -> None:
    assert _shuffle_then_cut_rules("holdem") == [
        ("R2", "ALL-4", "shuffle_before_round"),
        ("R3", "ALL-4", "cut_before_round"),
    ]


def test_a_cut_before_the_shuffle_does_not_count_for_the_round() -> None:
    """ALL-4 / TCP-A7: shuffle *then* cut; a cut followed by a shuffle leaves the deck uncut."""
    found = findings_at_starts(
        "tripoker",
        [shuffle("tripoker"), cut("tripoker"), shuffle("tripoker"), start("tripoker", "R1")],
    )
    assert found == [("R1", "TCP-A7", "cut_before_round")]


def test_def_thp6_two_holdem_rounds_in_a_row_from_one_deck() -> None:
    """THP-A2d / DEF-THP6: the two decks alternate every round."""
    game = "holdem"
    rounds = []
    for number, deck in enumerate(["D1", "D2", "D2", "D1"], start=1):
        rounds += [shuffle(game, deck), cut(game, deck), start(game, f"R{number}", deck)]
    assert findings_at_starts(game, rounds) == [("R3", "THP-A2d", "alternating_decks")]
    # Pai Gow and Tripóker deal every round from one deck: no such rule there.
    for other in ("pai_gow", "tripoker"):
        same = [e for n in (1, 2) for e in (shuffle(other), cut(other), start(other, f"R{n}"))]
        assert findings_at_starts(other, same) == []


# ---- a new deck before its first round (PGP-A6a, PGP-A6b, TCP-A6, THP-A6) ---------------------


def opening(game: str) -> Event:
    limits = [{"spot": "main" if game == "pai_gow" else "ante", "min_cents": 1, "max_cents": 9}]
    return ev("table_opened", game, profile="p", profile_version=1, seats=7, limits=limits)


def deck_events(game: str, deck: str, steps: str) -> list[Event]:
    """A new deck opened and counted, then its steps in the order given (i: inspected, w: washed,
    s: shuffled, c: cut)."""
    events = [
        ev("deck_opened", game, deck_id=deck, back_colour="red", jokers_in_box=0),
        ev("deck_counted", game, deck_id=deck, count=53 if game == "pai_gow" else 52),
    ]
    kinds = {
        "i": lambda: ev("deck_inspected", game, deck_id=deck),
        "w": lambda: ev("deck_washed", game, deck_id=deck),
        "s": lambda: shuffle(game, deck),
        "c": lambda: cut(game, deck),
    }
    return events + [kinds[step]() for step in steps]


def new_deck_findings(game: str, events: list[Event]) -> list[tuple[str, str, str]]:
    """Only the new-deck findings, from a table that has just opened."""
    found = _run(TableState(table_id="T-1", game=game), [opening(game), *events])
    return [f for f in found if f[2] in ("deck_inspected", "new_deck_order")]


def test_pgp_a6a_the_first_deck_is_inspected_before_its_first_round() -> None:
    game = "pai_gow"
    ok = [*deck_events(game, "D1", "iwsc"), start(game, "R1", "D1")]
    assert new_deck_findings(game, ok) == []
    # A wash before the inspection is fine in Pai Gow: the page orders no steps (PGP-A7c).
    late = [*deck_events(game, "D1", "wisc"), start(game, "R1", "D1")]
    assert new_deck_findings(game, late) == []
    missing = [*deck_events(game, "D1", "wsc"), start(game, "R1", "D1"), shuffle(game)]
    missing += [cut(game), start(game, "R2", "D1")]
    # Reported once, at the deck's first round; its later rounds are not new-deck rounds.
    assert new_deck_findings(game, missing) == [("R1", "PGP-A6a", "deck_inspected")]


def test_pgp_a6b_every_deck_change_is_inspected_again() -> None:
    game = "pai_gow"
    events = [*deck_events(game, "D1", "iwsc"), start(game, "R1", "D1")]
    events += [ev("deck_retired", game, deck_id="D1", reason="faulty card")]
    events += [*deck_events(game, "D2", "wsc"), start(game, "R2", "D2")]
    # An inspection of D2 before it was opened is not of the new deck.
    events += [ev("deck_inspected", game, deck_id="D3")]
    events += [*deck_events(game, "D3", "wsc"), start(game, "R3", "D3")]
    events += [*deck_events(game, "D4", "iwsc"), start(game, "R4", "D4")]
    assert new_deck_findings(game, events) == [
        ("R2", "PGP-A6b", "deck_inspected"),
        ("R3", "PGP-A6b", "deck_inspected"),
    ]
    # A new day: the first deck after table_opened is PGP-A6a's again.
    again = [*events, opening(game), *deck_events(game, "D5", "sc"), start(game, "R5", "D5")]
    assert new_deck_findings(game, again)[-1] == ("R5", "PGP-A6a", "deck_inspected")


def test_pgp_a6a_a_deck_never_opened_is_new_at_its_first_round() -> None:
    game = "pai_gow"
    events = [shuffle(game, "DX"), cut(game, "DX"), start(game, "R1", "DX")]
    assert new_deck_findings(game, events) == [("R1", "PGP-A6a", "deck_inspected")]


def test_tcp_a6_and_thp_a6_show_wash_shuffle_cut_in_that_order() -> None:
    for game, rule in (("tripoker", "TCP-A6"), ("holdem", "THP-A6")):
        cases = {
            "iwsc": [],
            "iwcsc": [rule],  # the deck's first cut came before its first shuffle
            "iiwwsscc": [],  # repeated steps: each step's first occurrence decides
            "isc": [rule],  # never washed
            "wsc": [rule],  # never shown
            "wisc": [rule],  # washed before shown
            "iswsc": [rule],  # shuffled before washed
            "ciwsc": [rule],  # cut before anything
        }
        for steps, expected in cases.items():
            events = [*deck_events(game, "D1", steps), start(game, "R1", "D1")]
            found = new_deck_findings(game, events)
            assert found == [("R1", r, "new_deck_order") for r in expected], (game, steps)
        # A missing shuffle or cut is not TCP-A6's / THP-A6's: TCP-A7 / ALL-4 report it.
        events = [*deck_events(game, "D1", "iw"), start(game, "R1", "D1")]
        assert new_deck_findings(game, events) == []
        # Pai Gow's inspection rule is not theirs.
        events = [*deck_events(game, "D1", "iwsc"), start(game, "R1", "D1")]
        assert not [f for f in new_deck_findings(game, events) if f[2] == "deck_inspected"]


def test_thp_a6_each_of_the_two_new_decks_is_prepared_in_order() -> None:
    game = "holdem"
    events = [*deck_events(game, "D1", "iw"), *deck_events(game, "D2", "w")]
    events += [shuffle(game, "D1"), cut(game, "D1"), start(game, "R1", "D1")]
    events += [shuffle(game, "D2"), cut(game, "D2"), start(game, "R2", "D2")]
    events += [shuffle(game, "D1"), cut(game, "D1"), start(game, "R3", "D1")]
    assert new_deck_findings(game, events) == [("R2", "THP-A6", "new_deck_order")]


def test_new_deck_state_survives_json_and_stays_bounded() -> None:
    """PGP-A6b on a hostile stream: thousands of deck ids never grow the table's state."""
    game = "pai_gow"
    state = TableState(table_id="T-1", game=game)
    for n in range(500):
        deck = f"D{n}"
        for event in (ev("deck_inspected", game, deck_id=deck), start(game, f"R{n}", deck)):
            table_checks.run(state, event)
            apply_table_event(state, event)
    assert len(state.dealt_decks) <= 64 and len(state.deck_steps) <= 64
    restored = TableState.from_json(state.to_json())
    assert restored.dealt_decks == state.dealt_decks
    assert restored.new_decks_dealt == state.new_decks_dealt == 500


def test_pgp_a6a_a_state_saved_before_new_decks_were_followed_reports_nothing() -> None:
    """A table state saved by an earlier version has no `dealt_decks`: its decks in play are
    not new decks, so no PGP-A6a / A6b finding follows an upgrade."""
    game = "pai_gow"
    state = TableState(table_id="T-1", game=game, last_round_deck="D1")
    state.decks = {"D1": [2, 1, 1]}
    state.needs_count = state.needs_wash = False
    data = state.to_json()
    for field in ("dealt_decks", "deck_steps", "new_decks_dealt"):
        del data[field]
    restored = TableState.from_json(data)
    assert restored.dealt_decks == ["D1"]
    assert _run(restored, [shuffle(game), cut(game), start(game, "R9", "D1")]) == []
