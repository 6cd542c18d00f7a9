"""What every game provides (`GameSpec`, registered once in `games.registry`), and the helpers
the games' round adapters share: a round's events grouped by type, its cards, its deal."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from events.models import (
    BetPlaced,
    CardsDealt,
    Decision,
    Event,
    Game,
    PlayerDecided,
    Recipient,
    RoundStarted,
    RoundVoided,
    Spot,
)
from rules.cards import CANONICAL
from rules.procedure import Finding, Severity, TableRules, finding_at
from rules.profile import Profile
from rules.settlement import RoundError, RoundSettlement

if TYPE_CHECKING:
    from games.odds_common import Report, Simulation
    from games.simulation.table import TableSim

E = TypeVar("E", bound=Event)


class RoundEvents:
    """A round's events in stream order, and grouped by type: one pass over them instead of one
    `isinstance` scan per question (closing a round asked about a dozen)."""

    __slots__ = ("_by_type", "all")

    def __init__(self, events: Sequence[Event]) -> None:
        self.all = events
        by_type: dict[type[Any], list[Event]] = {}
        for event in events:
            group = by_type.get(type(event))
            if group is None:
                by_type[type(event)] = [event]
            else:
                group.append(event)
        self._by_type = by_type

    def of(self, kind: type[E]) -> list[E]:
        """The events of type `kind` (event models are never subclassed), in stream order."""
        return cast("list[E]", self._by_type.get(kind, []))

    def first(self, kind: type[E]) -> E | None:
        found = self._by_type.get(kind)
        return cast("E", found[0]) if found else None

    def seats_betting(self, spot: Spot) -> set[int]:
        """The seats with a bet placed on `spot` (the seats that anted: `Spot.ANTE`)."""
        return {b.seat for b in self.of(BetPlaced) if b.spot is spot}


@dataclass(frozen=True, kw_only=True)
class GameSpec:
    """One game, as the platform needs it: the consumer (checks, settlement from events, the
    rules of a void), the simulator (its table) and the CLI (its profiles, its math)."""

    game: Game
    default_profile: str
    # Its rule profile's type (games/<game>/profile.py): the numbers its page sets, read from TOML.
    profile_type: type[Profile]
    void_rules: tuple[str, ...]  # the articles that return every bet of a voided round
    # The spot of the wager a player's decision makes (player_decided's amount: Tripóker's play,
    # Hold'em's call); None for a game without decisions. A void returns it like a bet placed.
    decision_spot: Spot | None
    # The article of a player's one decision: a second one for a seat is reported under it.
    decision_rule: str
    # The articles by which a wager the rules engine settles on no line is not in action (a
    # play, call or progressive of a seat without an ante): the consumer returns it, and the
    # game's check reports it under the same article.
    unplayed_rules: tuple[str, ...]
    table_rules: TableRules  # its deck, and its articles for the procedures every game has
    # The game's procedure checks on a closed round's events (ALL-* checks are shared).
    checks: Callable[[RoundEvents, Profile], list[Finding]]
    # The rules engine's record of the round, built from its events, settled; the third argument
    # is the table's progressive meter before the round (None where the table has none).
    settle: Callable[[RoundEvents, Profile, int | None], RoundSettlement]
    simulator: type[TableSim]
    # The game math of a profile (`games.odds.game_math` completes it): the house edge of every
    # wager; a simulated game draws from the `Simulation` (its generator and budget), which it
    # cannot do without.
    odds: Callable[[Profile, Simulation | None], Report]
    # The report's wager whose house edge each bet spot carries (theoretical win, DEF-ACC2); None
    # for a bet decided with another and already inside its edge (it carries 0).
    spot_wagers: Mapping[str, str | None]
    # `croupier settle`: a round record as JSON (the game's `record.py`) to the engine, settled;
    # the third argument is the table's meter before the round (None: the profile's seed).
    settle_record: Callable[[Mapping[str, Any], Profile, int | None], RoundSettlement]
    # `croupier what-if --decisions strategy`: the round's decisions taken again by a profile's
    # strategy (games/<game>/strategy.py); None where the game has none yet.
    redecide: Callable[[Profile], Decider] | None = None
    # The hold test's expectation (issue 18): the house's expected result of every player
    # position over the cards its players could not see, given the cards and decisions as
    # played, under the round's profile; the third argument is the meter before the round.
    expected: Callable[[RoundEvents, Profile, int | None], RoundExpectation] | None = None
    # The decisions' evidence (issue 18): each play/fold or call/fold decision beside the
    # legitimate-optimal and the full-information choice; None for a game without decisions.
    informed: Callable[[RoundEvents, Profile, int | None], dict[int, Informed]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Expectation:
    """A player position's house result as expected before the cards its player could not see
    (the dealer's hidden cards, cards still to come), given the cards and decisions as played.
    `mean_cents` and `variance` (céntimos²) are the exact conditional mean and variance, or
    estimates from `samples` draws, when `variance` also holds the estimate's own variance
    (the mean's squared standard error), so a test that uses them stays calibrated."""

    mean_cents: float
    variance: float
    samples: int | None = None  # None: exact (every completion enumerated)


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundExpectation:
    """Every player position of a round (by seat), and the variance of their sum: positions of
    one round share the dealer's cards, so their results are correlated and the round's
    variance is not the sum of theirs."""

    seats: Mapping[int, Expectation]
    total_variance: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Informed:
    """One player's decision beside what the information allowed. `legitimate`: the best
    choice from what the player may see (own cards; the exposed dealer card; the flop);
    `full_information`: the best choice knowing the dealer's hidden cards too (cards still to
    come stay unknown). Values are the player's expected result in céntimos of each choice
    knowing the dealer's hidden cards; `gain_cents` = value of the choice played minus value of
    the legitimate choice: what the player won beyond legitimate-optimal play."""

    played: Decision
    legitimate: Decision
    full_information: Decision
    gain_cents: float
    # The null model of the hole-carding test: the share of the dealer's hidden cards (every
    # way they could lie, given what the player saw) for which the full-information choice is
    # the choice played. A player who cannot see them matches with exactly this probability,
    # however they decide; None where not computed.
    match_probability: float | None = None

    @property
    def informative(self) -> bool:
        """Only decisions where the two strategies differ carry evidence of hidden knowledge."""
        return self.legitimate is not self.full_information


# A round with its decisions taken again, and how many changed.
Decider = Callable[["RoundEvents"], tuple["RoundEvents", int]]


class RecordModel(BaseModel):
    """A round record as `croupier settle` reads it: no unknown field, cards as strings
    (`As`, `Td`, `Jk`), money integer céntimos."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def started(kinds: RoundEvents) -> RoundStarted:
    found = kinds.first(RoundStarted)
    if found is None:  # the processor opens a round only on its round_started
        raise RoundError("the round has no round_started")
    return found


def played(decided: PlayerDecided | None, wagering: Decision) -> int | None:
    """The wager a decision recorded (Tripóker's play, Hold'em's call), for the rules engine to
    settle; None for another decision (a fold wagers nothing) or none."""
    if decided is None or decided.decision is not wagering:
        return None
    return decided.amount_cents


def decision_amounts(
    kinds: RoundEvents, wagering: Decision, multiple: int, rule_id: str
) -> list[Finding]:
    """A decision's wager is `multiple × ante` of its seat for `wagering` (DEF-TCP2's play,
    DEF-THP1's call) and nothing for a fold: a decision recording another amount breaks
    `rule_id`. The rules engine settles the amount recorded (the money in the box), so this
    finding is what says it is not the article's. Seats without an ante are the games' own
    findings; a voided round returns every wager (ALL-5) and is not judged."""
    if kinds.of(RoundVoided):
        return []
    antes: dict[int, int] = defaultdict(int)
    for bet in kinds.of(BetPlaced):
        if bet.spot is Spot.ANTE:
            antes[bet.seat] += bet.amount_cents
    findings = []
    for event in kinds.of(PlayerDecided):
        if event.seat not in antes:
            continue
        rule_cents = antes[event.seat] * multiple if event.decision is wagering else 0
        if event.amount_cents != rule_cents:
            findings.append(
                finding_at(
                    event, rule_id, "decision_amount", Severity.MAJOR,
                    seat=event.seat,
                    decision=event.decision.value,
                    recorded_cents=event.amount_cents,
                    rule_cents=rule_cents,
                )
            )  # fmt: skip
    return findings


def stakes(kinds: RoundEvents, spots: Sequence[Spot]) -> dict[Spot, dict[int, int]]:
    """Céntimos staked per spot and seat. A bet on a spot the game does not take (a Tripóker
    `call`, a Pai Gow `ante`) cannot be settled as another: the round is not settled on it
    (`RoundError`), and ALL-1 reports the bet (no limit is posted for such a spot)."""
    by_spot: dict[Spot, dict[int, int]] = {spot: defaultdict(int) for spot in spots}
    for bet in kinds.of(BetPlaced):
        if bet.spot not in by_spot:
            taken = ", ".join(spot.value for spot in spots)
            raise RoundError(
                f"a bet on '{bet.spot.value}', a spot this game does not take ({taken})"
            )
        by_spot[bet.spot][bet.seat] += bet.amount_cents
    return by_spot


_CARD_OF = CANONICAL.__getitem__


def cards(texts: Sequence[str]) -> tuple[int, ...]:
    return tuple(map(_CARD_OF, texts))  # the contract admits only canonical spellings


def dealt(kinds: RoundEvents) -> tuple[dict[int, tuple[int, ...]], tuple[int, ...]]:
    """Cards per seat, and the dealer's cards, each in deal order."""
    seats: dict[int, list[tuple[int, int]]] = defaultdict(list)
    dealer: list[tuple[int, int]] = []
    for e in kinds.of(CardsDealt):
        if e.recipient is Recipient.SEAT and e.seat is not None:
            to = seats[e.seat]
        elif e.recipient is Recipient.DEALER and e.seat is None:
            to = dealer
        else:
            continue
        for card, order in zip(e.cards, e.deal_order, strict=True):
            to.append((order, CANONICAL[card]))
    return (
        {seat: tuple(c for _, c in sorted(pairs)) for seat, pairs in seats.items()},
        tuple(c for _, c in sorted(dealer)),
    )
