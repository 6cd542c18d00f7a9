"""What the processor remembers about each table between events."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from events import Event, dump_event, parse_event
from events.models import (
    CutCompleted,
    DealerChanged,
    DeckCounted,
    DeckInspected,
    DeckOpened,
    DeckRetired,
    DeckWashed,
    JokerDestroyed,
    ProgressiveMeterReset,
    RoundStarted,
    ShuffleCompleted,
    TableClosed,
    TableOpened,
)
from rules.procedure import Finding, Severity

MAX_DEALT_DECKS = 64  # a table holds a few decks; a hostile stream cannot grow the state
_DECK_STEPS = {
    DeckInspected: "inspected",
    DeckWashed: "washed",
    ShuffleCompleted: "shuffled",
    CutCompleted: "cut",
}
_EARLIEST, _LATEST = datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)


@dataclass
class TableState:
    """Everything the processor must remember about one table between events."""

    table_id: str
    casino_id: str = ""
    game: str = ""
    closed: bool = False
    last_seq: int | None = None
    last_at: datetime | None = None  # occurred_at of the table's last plausible event
    # [missing seq, round_id, event_id, seq, occurred_at] of the event that revealed it
    pending_missing: list[list[Any]] = field(default_factory=list)
    profile: str | None = None
    profile_version: int | None = None
    payout_cap_cents: int | None = None
    commission_unit_cents: int | None = None
    limits: dict[str, list[int]] = field(default_factory=dict)  # spot -> [min, max]
    dealer_id: str | None = None
    # deck_id -> [jokers in the box, jokers destroyed, counted]
    decks: dict[str, list[int]] = field(default_factory=dict)
    needs_count: bool = True
    needs_wash: bool = True
    shuffled: bool = False
    cut: bool = False
    last_round_deck: str | None = None
    # A new deck's preparation until its first round (PGP-A6, TCP-A6, THP-A6): deck_id -> the
    # steps seen for it since it was opened, each once, in the order first seen ("inspected",
    # "washed", "shuffled", "cut"). Dropped at the deck's first round or retirement.
    deck_steps: dict[str, list[str]] = field(default_factory=dict)
    # Decks a round has been dealt from (not new any more), until retired; at most MAX_DEALT_DECKS.
    dealt_decks: list[str] = field(default_factory=list)
    # New decks brought into play since the table opened: 0 means the next is the day's first
    # (PGP-A6a), any other a deck change (PGP-A6b).
    new_decks_dealt: int = 0
    meter_cents: int | None = None
    round_id: str | None = None
    round_events: list[Event] = field(default_factory=list)
    round_findings: list[Finding] = field(default_factory=list)
    round_end_pending: bool = False
    # Events of a new numbering, held until RESYNC_AFTER consecutive ones confirm it.
    held: list[Event] = field(default_factory=list)
    # Stream faults already reported since the last round boundary: repeats are counted, not
    # reported again (a replayed recording is flagged once, not once per message).
    reported: dict[str, int] = field(default_factory=dict)
    skip_round: str | None = None  # a round found unprocessable: its later events only stored
    # The plausible range of the next event's time, from the message's clock until
    # `clock_until_ms` (see `_message_time`) or, without one, from `last_at` (`_session_time`).
    # Empty until the first event (every comparison with it fails). Saved with the rest: it
    # decides when `last_at` moves and which times are checked, so a consumer that resumes
    # from the lake must go on with the same range as one that never stopped.
    time_lo: datetime = field(default=_LATEST, repr=False, compare=False)
    time_hi: datetime = field(default=_EARLIEST, repr=False, compare=False)
    clock_until_ms: int = field(default=0, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in _PLAIN_FIELDS}
        data["last_at"] = self.last_at.isoformat() if self.last_at is not None else None
        data["round_events"] = [dump_event(e).decode() for e in self.round_events]
        data["held"] = [dump_event(e).decode() for e in self.held]
        data["round_findings"] = [_finding_json(f) for f in self.round_findings]
        data["time_range"] = [self.time_lo.isoformat(), self.time_hi.isoformat()]
        data["clock_until_ms"] = self.clock_until_ms
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableState:
        state = cls(**{k: data[k] for k in _PLAIN_FIELDS if k in data})
        if isinstance(state.last_at, str):
            state.last_at = datetime.fromisoformat(state.last_at)
        state.round_events = [parse_event(e) for e in data.get("round_events", [])]
        state.held = [parse_event(e) for e in data.get("held", [])]
        if "time_range" in data:  # saved before it was: empty, as for a table never seen
            state.time_lo, state.time_hi = map(datetime.fromisoformat, data["time_range"])
            state.clock_until_ms = data["clock_until_ms"]
        if "dealt_decks" not in data:
            # Saved before new decks were followed (PGP-A6, TCP-A6, THP-A6): the decks it knew
            # are in play already, not new decks to report at their next round.
            known = [*state.decks, *([state.last_round_deck] if state.last_round_deck else [])]
            state.dealt_decks = list(dict.fromkeys(known))[-MAX_DEALT_DECKS:]
            state.new_decks_dealt = len(state.dealt_decks)
        state.round_findings = [
            Finding(
                rule_id=f["rule_id"],
                check=f["check"],
                severity=Severity(f["severity"]),
                evidence=f["evidence"],
                seq=f["seq"],
                event_id=f["event_id"],
                occurred_at=datetime.fromisoformat(f["occurred_at"]) if f["occurred_at"] else None,
            )
            for f in data.get("round_findings", [])
        ]
        return state


_PLAIN_FIELDS = tuple(
    name
    for name in TableState.__dataclass_fields__
    if name
    not in ("round_events", "round_findings", "held", "time_lo", "time_hi", "clock_until_ms")
)


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "rule_id": f.rule_id,
        "check": f.check,
        "severity": f.severity.value,
        "evidence": dict(f.evidence),
        "seq": f.seq,
        "event_id": f.event_id,
        "occurred_at": f.occurred_at.isoformat() if f.occurred_at else None,
    }


def _deck_step(state: TableState, event: Event) -> None:
    """Note a preparation step of a deck not yet dealt from (PGP-A6, TCP-A6, THP-A6)."""
    step = _DECK_STEPS.get(type(event))
    deck_id = getattr(event, "deck_id", None)
    if step is None or deck_id is None or deck_id in state.dealt_decks:
        return
    steps = state.deck_steps.setdefault(deck_id, [])
    if step not in steps:
        steps.append(step)
    while len(state.deck_steps) > MAX_DEALT_DECKS:  # the oldest first (insertion order)
        del state.deck_steps[next(iter(state.deck_steps))]


def _deck_dealt(state: TableState, deck_id: str) -> None:
    """A round is dealt from `deck_id`: from now on it is not a new deck."""
    state.deck_steps.pop(deck_id, None)
    if deck_id in state.dealt_decks:
        return
    state.new_decks_dealt += 1
    state.dealt_decks.append(deck_id)
    del state.dealt_decks[:-MAX_DEALT_DECKS]


def apply_table_event(state: TableState, event: Event) -> None:
    """What a table-level event, or a round's start, changes in the table's state (after its
    checks, `consumers/table_checks.py`, have seen the state before it)."""
    _deck_step(state, event)
    if isinstance(event, TableOpened):
        state.closed = False
        state.profile, state.profile_version = event.profile, event.profile_version
        state.payout_cap_cents = event.payout_cap_cents
        state.commission_unit_cents = event.commission_unit_cents
        state.limits = {lim.spot.value: [lim.min_cents, lim.max_cents] for lim in event.limits}
        state.needs_count = state.needs_wash = True
        state.new_decks_dealt = 0
    elif isinstance(event, DealerChanged):
        state.dealer_id = event.dealer_id
        state.needs_count = state.needs_wash = True  # PGP-A7c
    elif isinstance(event, DeckOpened):
        state.decks[event.deck_id] = [event.jokers_in_box, 0, 0]
        state.deck_steps.pop(event.deck_id, None)  # a new deck: its preparation starts now
        state.deck_steps[event.deck_id] = []
        while len(state.deck_steps) > MAX_DEALT_DECKS:
            del state.deck_steps[next(iter(state.deck_steps))]
        if event.deck_id in state.dealt_decks:
            state.dealt_decks.remove(event.deck_id)
        state.needs_count = state.needs_wash = True
    elif isinstance(event, JokerDestroyed):
        state.decks.setdefault(event.deck_id, [0, 0, 0])[1] += event.count
    elif isinstance(event, DeckRetired):
        state.decks.pop(event.deck_id, None)
        state.deck_steps.pop(event.deck_id, None)
        if event.deck_id in state.dealt_decks:
            state.dealt_decks.remove(event.deck_id)
    elif isinstance(event, DeckCounted):
        state.decks.setdefault(event.deck_id, [0, 0, 0])[2] = 1  # its jokers checked once
        state.needs_count = False
    elif isinstance(event, DeckWashed):
        state.needs_wash = False
    elif isinstance(event, ShuffleCompleted):
        state.shuffled = True
        state.cut = False
    elif isinstance(event, CutCompleted):
        state.cut = True
    elif isinstance(event, ProgressiveMeterReset):
        state.meter_cents = event.meter_cents
    elif isinstance(event, TableClosed):
        state.closed = True
    elif isinstance(event, RoundStarted):  # the next round needs a new shuffle and cut
        state.shuffled = state.cut = False
        state.last_round_deck = event.deck_id
        state.dealer_id = event.dealer_id
        _deck_dealt(state, event.deck_id)
