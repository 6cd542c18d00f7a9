"""Table-level procedure checks: pure functions of a table's state and the event at hand.

Each check names its rule IDs and returns its findings; `run` applies those registered for the
event's type, in order, before the event changes the table's state (`state.apply_table_event`,
then the processor's round bookkeeping). Round-level checks run when a round closes
(`consumers/rounds.py`, the games' `checks.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from consumers.state import TableState
from events.models import DeckCounted, Event, RoundStarted
from games.registry import GAMES
from rules.procedure import Finding, Severity, finding_at, jokers_left_in_play

Check = Callable[[TableState, Any], list[Finding]]


def jokers_removed(state: TableState, event: DeckCounted) -> list[Finding]:
    """PGP-A6d, TCP-A5b, THP-A5: at a deck's first count, the box's jokers are dealt with (all
    destroyed but the one Pai Gow plays with)."""
    rules = GAMES[event.game].table_rules
    in_box, destroyed, counted = state.decks.get(event.deck_id, [0, 0, 0])
    if counted or in_box - destroyed == jokers_left_in_play(rules, in_box):
        return []
    return [
        finding_at(
            event,
            rules.joker,
            "jokers_removed",
            Severity.CRITICAL,
            jokers_in_box=in_box,
            destroyed=destroyed,
            deck_id=event.deck_id,
        )
    ]


def deck_count(state: TableState, event: DeckCounted) -> list[Finding]:
    """PGP-A7a, ALL-3: a counted deck has the game's number of cards."""
    rules = GAMES[event.game].table_rules
    expected = rules.deck_size
    if event.count == expected:
        return []
    return [
        finding_at(
            event,
            rules.deck_count,
            "deck_count",
            Severity.CRITICAL,
            expected=expected,
            counted=event.count,
            deck_id=event.deck_id,
        )
    ]


def shuffled_and_cut(state: TableState, event: RoundStarted) -> list[Finding]:
    """PGP-A8a/b, TCP-A7, ALL-4: every round is dealt from a deck shuffled, then cut."""
    rules = GAMES[event.game].table_rules
    if not state.shuffled:
        return [finding_at(event, rules.shuffle, "shuffle_before_round", Severity.MAJOR)]
    if not state.cut:
        return [finding_at(event, rules.cut, "cut_before_round", Severity.MAJOR)]
    return []


def deck_ready(state: TableState, event: RoundStarted) -> list[Finding]:
    """PGP-A7c: where the page says so (Pai Gow), the cards are counted and washed after a new
    deck or dealer; ALL-3: at the other games, the round's deck was counted."""
    rules = GAMES[event.game].table_rules
    rule = rules.count_and_wash
    if rule is not None:
        if not (state.needs_count or state.needs_wash):
            return []
        return [
            finding_at(
                event,
                rule,
                "count_and_wash",
                Severity.MAJOR,
                counted=not state.needs_count,
                washed=not state.needs_wash,
            )
        ]
    if state.decks.get(event.deck_id, [0, 0, 0])[2]:
        return []
    return [
        finding_at(event, rules.deck_count, "deck_verified", Severity.MAJOR, deck_id=event.deck_id)
    ]


def alternating_decks(state: TableState, event: RoundStarted) -> list[Finding]:
    """THP-A2d: where the page says so (Hold'em), two decks alternate, never dealing two rounds
    in a row from one."""
    rule = GAMES[event.game].table_rules.alternate_decks
    if rule is None or state.last_round_deck != event.deck_id:
        return []
    return [finding_at(event, rule, "alternating_decks", Severity.MAJOR, deck_id=event.deck_id)]


# TCP-A6, THP-A6: a new deck's steps, in this order (the turn face down has no event).
NEW_DECK_ORDER = ("inspected", "washed", "shuffled", "cut")


def new_deck_prepared(state: TableState, event: RoundStarted) -> list[Finding]:
    """A new deck's first round (a deck no round was dealt from since it was opened):

    - PGP-A6a, A6b (Pai Gow): the deck was inspected (`deck_inspected`: the supervisor's check,
      the faces spread by suit) before it: PGP-A6a for the first deck dealt from after the
      table opened, PGP-A6b for every later new deck (a deck change). What the supervisor sees
      (new, complete, unmarked) is physical; completeness is the count's (PGP-A7a).
    - TCP-A6, THP-A6 (Tripóker, Hold'em): "show, turn, wash, shuffle, cut, in that order": the
      deck was shown (`deck_inspected`) and washed (`deck_washed`) before it, and the first
      `deck_inspected`, `deck_washed`, `shuffle_completed`, `cut_completed` of the deck came in
      that order. Turning the cards face down has no event. A missing shuffle or cut is not
      reported here: every round's shuffle-then-cut is TCP-A7's / ALL-4's (`shuffled_and_cut`),
      so one mistake is reported once.

    Ambiguities decided: a step counts from the deck's `deck_opened` (an inspection before the
    box is opened cannot be of the new deck); a deck dealt from without any `deck_opened` is
    new at its first round too (its steps are those seen for its id); each step's first
    occurrence decides the order (a wash after a shuffle does not undo a shuffle made before
    the wash). One finding per new deck, at its first round's `round_started`."""
    rules = GAMES[event.game].table_rules
    if event.deck_id in state.dealt_decks:
        return []
    steps = state.deck_steps.get(event.deck_id, [])
    findings: list[Finding] = []
    first = state.new_decks_dealt == 0
    rule = rules.deck_inspected if first else rules.deck_change_inspected
    if rule is not None and "inspected" not in steps:
        findings.append(
            finding_at(
                event,
                rule,
                "deck_inspected",
                Severity.MAJOR,
                deck_id=event.deck_id,
                first_deck=first,
                steps=list(steps),
            )
        )
    order = rules.new_deck_order
    if order is not None:
        seen = [step for step in steps if step in NEW_DECK_ORDER]
        in_order = seen == [step for step in NEW_DECK_ORDER if step in seen]
        if not (in_order and "inspected" in seen and "washed" in seen):
            findings.append(
                finding_at(
                    event,
                    order,
                    "new_deck_order",
                    Severity.MAJOR,
                    deck_id=event.deck_id,
                    expected=list(NEW_DECK_ORDER),
                    seen=seen,
                )
            )
    return findings


CHECKS: dict[type[Event], Sequence[Check]] = {
    DeckCounted: (jokers_removed, deck_count),
    RoundStarted: (shuffled_and_cut, deck_ready, alternating_decks, new_deck_prepared),
}


def run(state: TableState, event: Event) -> list[Finding]:
    """The findings of every check registered for the event's type, in order."""
    return [finding for check in CHECKS.get(type(event), ()) for finding in check(state, event)]
