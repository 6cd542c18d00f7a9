"""The table-event contract: one frozen pydantic model per event type, tagged on `event_type`.

Every event is an envelope (who, where, when, in which order) plus the payload of its type.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Literal, Self
from uuid import UUID

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    Strict,
    StringConstraints,
    model_validator,
)

# Cards use the shared notation of rules/cards.py in its canonical spelling only, so one card has
# one spelling on the wire: rank 2-9 T J Q K A + suit c d h s, or the Pai Gow joker "Jk".
CARD_PATTERN = r"^(?:[2-9TJQKA][cdhs]|Jk)$"
Card = Annotated[str, StringConstraints(pattern=CARD_PATTERN)]
Ident = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=200)]
_OFFSET_TIME = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
# Strict: a string, float or bool where an integer belongs is a producer bug, never coerced.
# Bounded so that any sum the platform stores fits a 64-bit integer: S/ 100,000 million per
# amount is far above any table's, and a larger value is a device fault, not a bet.
MAX_CENTS = 10**13
Cents = Annotated[int, Strict(), Field(ge=0, le=MAX_CENTS)]
PositiveCents = Annotated[int, Strict(), Field(gt=0, le=MAX_CENTS)]
Seat = Annotated[int, Strict(), Field(ge=1, le=7)]
Position = Annotated[int, Strict(), Field(ge=0, le=7)]
Die = Annotated[int, Strict(), Field(ge=1, le=6)]
DealOrder = Annotated[int, Strict(), Field(ge=1, le=64)]


def _utc_text(value: datetime) -> str:
    text = value.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


# Strict: an ISO 8601 string in JSON (a number is refused); a naive time is refused. Any offset is
# accepted, as the same instant; the canonical JSON (events.dump_event) is always UTC with a `Z`.
# Normalising on output rather than on input keeps every parse free of Python-level code.
UtcDatetime = Annotated[
    AwareDatetime,
    Strict(),
    PlainSerializer(_utc_text, return_type=str, when_used="json"),
    Field(json_schema_extra={"pattern": _OFFSET_TIME}),
]


# The one vocabulary of games, spots and decisions: the event contract, the rules engine and the
# marts all use these. A game's value is its wire name (events, lake, marts); its `slug` is how
# people write it: CLI options, rule-profile folders and names ("pai-gow/pe-1999").
class Game(StrEnum):
    PAI_GOW = "pai_gow"
    TRIPOKER = "tripoker"
    HOLDEM = "holdem"

    @property
    def slug(self) -> str:
        return self.value.replace("_", "-")

    @classmethod
    def from_slug(cls, text: str) -> Game:
        """The game whose slug is `text` ("pai-gow"); ValueError for none."""
        for game in cls:
            if game.slug == text:
                return game
        raise ValueError(f"unknown game {text!r}")


class Spot(StrEnum):
    """Bet spots: Pai Gow `main`; Tripóker `ante`, `pair_plus`, `play`; Hold'em `ante`, `call`,
    `progressive`. `ante_bonus` (DEF-TCP4, paid on the ante) appears only in payout_recorded."""

    MAIN = "main"
    ANTE = "ante"
    ANTE_BONUS = "ante_bonus"
    PAIR_PLUS = "pair_plus"
    PLAY = "play"
    CALL = "call"
    PROGRESSIVE = "progressive"


class Recipient(StrEnum):
    SEAT = "seat"
    DEALER = "dealer"
    GROUP = "group"
    BURN = "burn"
    DISCARD = "discard"


class Decision(StrEnum):
    PLAY = "play"
    FOLD = "fold"
    CALL = "call"
    SURRENDER = "surrender"


class Street(StrEnum):
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"


class ShuffleMethod(StrEnum):
    MANUAL = "manual"
    MACHINE = "machine"


class CutBy(StrEnum):
    PLAYER = "player"
    DEALER = "dealer"


class InventoryKind(StrEnum):
    OPENING = "opening"
    CLOSING = "closing"


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SpotLimit(_Part):
    spot: Spot
    min_cents: PositiveCents
    max_cents: PositiveCents


class ChipCount(_Part):
    denomination_cents: PositiveCents
    count: Annotated[int, Strict(), Field(ge=0, le=10**9)]


class _Envelope(_Part):
    event_id: UUID
    event_type: str
    schema_version: int
    casino_id: Ident
    table_id: Ident
    game: Game
    round_id: Ident | None
    seq: Annotated[int, Strict(), Field(ge=0, le=2**62)]
    occurred_at: UtcDatetime
    source_device: Ident


class _TableEvent(_Envelope):
    round_id: None


class _RoundEvent(_Envelope):
    round_id: Ident


# ---- table level ------------------------------------------------------------------------------


class TableOpened(_TableEvent):
    """The table opens under a rule profile, with its posted limits (ALL-1), payout cap (THP-A2c)
    and commission unit (DEF-M2)."""

    event_type: Literal["table_opened"]
    schema_version: Literal[1]
    profile: Ident
    profile_version: Annotated[int, Strict(), Field(ge=1, le=2**31 - 1)]  # an INTEGER column
    seats: Annotated[int, Strict(), Field(ge=1, le=7)]
    limits: Annotated[list[SpotLimit], Field(min_length=1)]
    payout_cap_cents: PositiveCents | None = None
    commission_unit_cents: PositiveCents | None = None


class TableClosed(_TableEvent):
    """The table closes; its decks are retired and its tray counted before (DEF-ACC1)."""

    event_type: Literal["table_closed"]
    schema_version: Literal[1]


class DealerChanged(_TableEvent):
    """A new dealer takes the table (PGP-A7c: the deck is counted and washed again)."""

    event_type: Literal["dealer_changed"]
    schema_version: Literal[1]
    dealer_id: Ident


class DeckOpened(_TableEvent):
    """A new deck taken out of its box: its id, back colour and the jokers it came with."""

    event_type: Literal["deck_opened"]
    schema_version: Literal[1]
    deck_id: Ident
    back_colour: Text
    jokers_in_box: Annotated[int, Strict(), Field(ge=0, le=2)]


class JokerDestroyed(_TableEvent):
    """Jokers taken out of a new deck: Pai Gow keeps one of two (PGP-A6d); Tripóker and Hold'em
    remove all (TCP-A5b, THP-A5)."""

    event_type: Literal["joker_destroyed"]
    schema_version: Literal[1]
    deck_id: Ident
    count: Annotated[int, Strict(), Field(ge=1, le=2)]


class DeckInspected(_TableEvent):
    """Faces shown and checked: new, complete, unmarked (PGP-A6a, TCP-A6, THP-A6)."""

    event_type: Literal["deck_inspected"]
    schema_version: Literal[1]
    deck_id: Ident


class DeckCounted(_TableEvent):
    """Version 2 renamed v1's `cards` to `count` (see events/upcasters.py)."""

    event_type: Literal["deck_counted"]
    schema_version: Literal[2]
    deck_id: Ident
    count: Annotated[int, Strict(), Field(ge=0, le=64)]


class DeckWashed(_TableEvent):
    """Cards washed face down and gathered (PGP-A7b, TCP-A6)."""

    event_type: Literal["deck_washed"]
    schema_version: Literal[1]
    deck_id: Ident


class DeckRetired(_TableEvent):
    """The deck leaves the table (PGP-A6c, TCP-A5c: fault, missing card, request, end of day)."""

    event_type: Literal["deck_retired"]
    schema_version: Literal[1]
    deck_id: Ident
    reason: Text


class ShuffleCompleted(_TableEvent):
    """The deck shuffled by hand or by a registered machine (PGP-A8a, PGP-A2m, TCP-A7)."""

    event_type: Literal["shuffle_completed"]
    schema_version: Literal[1]
    deck_id: Ident
    method: ShuffleMethod
    device: Ident | None = None


class CutCompleted(_TableEvent):
    """The cut card inserted (PGP-A8b: by a player or else the dealer); `depth` in cards from the
    base of the pack."""

    event_type: Literal["cut_completed"]
    schema_version: Literal[1]
    deck_id: Ident
    by: CutBy
    seat: Seat | None = None
    depth: Annotated[int, Strict(), Field(ge=0, le=64)]


class InventoryCounted(_TableEvent):
    """The chip tray counted by denomination: opening and closing inventory of DEF-ACC1."""

    event_type: Literal["inventory_counted"]
    schema_version: Literal[1]
    kind: InventoryKind
    chips: list[ChipCount]


class FillRecorded(_TableEvent):
    """Chips brought from the cage to the tray (DEF-ACC1)."""

    event_type: Literal["fill_recorded"]
    schema_version: Literal[1]
    amount_cents: PositiveCents


class CreditRecorded(_TableEvent):
    """Chips sent from the tray back to the cage (DEF-ACC1)."""

    event_type: Literal["credit_recorded"]
    schema_version: Literal[1]
    amount_cents: PositiveCents


class DropRecorded(_TableEvent):
    """Cash counted out of the drop box (PGP-A2g)."""

    event_type: Literal["drop_recorded"]
    schema_version: Literal[1]
    amount_cents: Cents


class ProgressiveMeterReset(_TableEvent):
    """The progressive meter set to a value by the operator, e.g. at opening (DEF-THP4)."""

    event_type: Literal["progressive_meter_reset"]
    schema_version: Literal[1]
    meter_cents: Cents
    reason: Text


# ---- round level ------------------------------------------------------------------------------


class RoundStarted(_RoundEvent):
    """`banker_position` is Pai Gow's banker (0 = the dealer's position, PGP-A11b, DEF-PGP2);
    null in the other games."""

    event_type: Literal["round_started"]
    schema_version: Literal[1]
    deck_id: Ident
    dealer_id: Ident
    banker_position: Position | None = None


class BetPlaced(_RoundEvent):
    """A wager on a seat's spot, with chips (ALL-1); `player_ref` is pseudonymous."""

    event_type: Literal["bet_placed"]
    schema_version: Literal[1]
    seat: Seat
    spot: Spot
    amount_cents: PositiveCents
    player_ref: Ident | None = None


class BetsClosed(_RoundEvent):
    """No more bets (PGP-A9c: the dice are being shaken)."""

    event_type: Literal["bets_closed"]
    schema_version: Literal[1]


class DiceRolled(_RoundEvent):
    """Three dice (PGP-A11); `valid` is false when a die was not flat or the cup was uncovered by
    anyone but the dealer, and a new roll follows (PGP-A11c)."""

    event_type: Literal["dice_rolled"]
    schema_version: Literal[1]
    dice: tuple[Die, Die, Die]
    valid: bool


class CardsDealt(_RoundEvent):
    """Cards given to one recipient; `deal_order[i]` is the 1-based place of `cards[i]` in the
    round's dealing sequence, so the serpentine deal (PGP-A10f) and the dealer-last rounds
    (TCP-A10a) can be checked."""

    event_type: Literal["cards_dealt"]
    schema_version: Literal[1]
    recipient: Recipient
    seat: Seat | None = None
    group: Annotated[int, Strict(), Field(ge=1, le=7)] | None = None
    cards: Annotated[list[Card], Field(min_length=1, max_length=16)]
    face_up: bool
    deal_order: Annotated[list[DealOrder], Field(min_length=1, max_length=16)]

    @model_validator(mode="after")
    def _recipient_fields(self) -> Self:
        if (self.seat is not None) != (self.recipient is Recipient.SEAT):
            raise ValueError("seat is given exactly when recipient is 'seat'")
        if (self.group is not None) != (self.recipient is Recipient.GROUP):
            raise ValueError("group is given exactly when recipient is 'group'")
        if len(self.deal_order) != len(self.cards):
            raise ValueError("deal_order must have one entry per card")
        return self


class PlayerDecided(_RoundEvent):
    """A player's decision; `amount_cents` is the play (Tripóker) or call (Hold'em) wager made
    with it, 0 for fold and surrender."""

    event_type: Literal["player_decided"]
    schema_version: Literal[1]
    seat: Seat
    decision: Decision
    amount_cents: Cents


class HandSet(_RoundEvent):
    """A Pai Gow position's setting (PGP-A13): `seat` is the position, 0 for the dealer. The
    counts are not fixed here, so a foul by card count (PGP-A15b, A15c) can be reported."""

    event_type: Literal["hand_set"]
    schema_version: Literal[1]
    seat: Position
    high: Annotated[list[Card], Field(max_length=7)]
    low: Annotated[list[Card], Field(max_length=7)]


class CommunityDealt(_RoundEvent):
    """Hold'em board cards, face up: the flop (3), the turn (1), the river (1)."""

    event_type: Literal["community_dealt"]
    schema_version: Literal[1]
    street: Street
    cards: Annotated[list[Card], Field(min_length=1, max_length=3)]


class DealerRevealed(_RoundEvent):
    """The dealer's hand shown (TCP-A11c, Hold'em), all of its cards."""

    event_type: Literal["dealer_revealed"]
    schema_version: Literal[1]
    cards: Annotated[list[Card], Field(min_length=1, max_length=7)]


class PayoutRecorded(_RoundEvent):
    """What the dealer did with one bet, as recorded: the wager taken (`collected_cents`), the
    winnings paid beside the returned wager (`paid_cents`) and the commission taken. A push is
    all zeros. An observation, compared with the settlement, never an outcome."""

    event_type: Literal["payout_recorded"]
    schema_version: Literal[1]
    seat: Position
    spot: Spot
    collected_cents: Cents
    paid_cents: Cents
    commission_cents: Cents


class ProgressiveMeterRecorded(_RoundEvent):
    """The meter shown at the end of a Hold'em round, after contributions and hits (DEF-THP4)."""

    event_type: Literal["progressive_meter_recorded"]
    schema_version: Literal[1]
    meter_cents: Cents


class RoundVoided(_RoundEvent):
    """The round is void (PGP-A10e, ALL-5): bets are returned; the next round needs the pre-round
    checks again (PGP-A7c)."""

    event_type: Literal["round_voided"]
    schema_version: Literal[1]
    reason: Text


class RoundEnded(_RoundEvent):
    """Every bet of the round is paid or collected; the round can be settled."""

    event_type: Literal["round_ended"]
    schema_version: Literal[1]


Event = Annotated[
    TableOpened
    | TableClosed
    | DealerChanged
    | DeckOpened
    | JokerDestroyed
    | DeckInspected
    | DeckCounted
    | DeckWashed
    | DeckRetired
    | ShuffleCompleted
    | CutCompleted
    | InventoryCounted
    | FillRecorded
    | CreditRecorded
    | DropRecorded
    | ProgressiveMeterReset
    | RoundStarted
    | BetPlaced
    | BetsClosed
    | DiceRolled
    | CardsDealt
    | PlayerDecided
    | HandSet
    | CommunityDealt
    | DealerRevealed
    | PayoutRecorded
    | ProgressiveMeterRecorded
    | RoundVoided
    | RoundEnded,
    Field(discriminator="event_type"),
]
