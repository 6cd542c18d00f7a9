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


CHECKS: dict[type[Event], Sequence[Check]] = {
    DeckCounted: (jokers_removed, deck_count),
    RoundStarted: (shuffled_and_cut, deck_ready, alternating_decks),
}


def run(state: TableState, event: Event) -> list[Finding]:
    """The findings of every check registered for the event's type, in order."""
    return [finding for check in CHECKS.get(type(event), ()) for finding in check(state, event)]
