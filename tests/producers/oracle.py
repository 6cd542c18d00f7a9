"""Independent checks of simulated streams: what each rule requires, written from the articles.

Each check returns findings `(rule_id, event_id)`; the tests compare them with the truth log.
Dice, serpentine and deck sizes are computed here from the text of the regulation, not taken from
the simulator; settlement and the house way are the rules engine's (the reference for payouts).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from events import Event, InvalidEvent, parse_event
from events.models import (
    BetPlaced,
    BetsClosed,
    CardsDealt,
    CommunityDealt,
    CutCompleted,
    Decision,
    DeckCounted,
    DeckInspected,
    DeckOpened,
    DeckWashed,
    DiceRolled,
    Game,
    HandSet,
    PayoutRecorded,
    PlayerDecided,
    ProgressiveMeterRecorded,
    ProgressiveMeterReset,
    Recipient,
    RoundStarted,
    ShuffleCompleted,
    TableOpened,
)
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import HandSet as RulesHandSet
from games.pai_gow.rules import PaiGowRound, PaiGowSeat, house_way, settle_pai_gow
from games.profiles import load_profile
from games.simulation.table import recorded_payout
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, settle_tripoker
from producers.simulator import Message
from rules.cards import JOKER, parse_card
from rules.settlement import RoundError

Finding = tuple[str, str]  # (rule_id, event_id)

DECK_SIZE = {Game.PAI_GOW: 53, Game.TRIPOKER: 52, Game.HOLDEM: 52}  # PGP-A7a, ALL-3
DECK_RULE = {Game.PAI_GOW: "PGP-A7a", Game.TRIPOKER: "ALL-3", Game.HOLDEM: "ALL-3"}
CUT_RULE = {Game.PAI_GOW: "PGP-A8b", Game.TRIPOKER: "TCP-A7", Game.HOLDEM: "ALL-4"}
PAY_RULE = {Game.PAI_GOW: "PGP-A17c", Game.TRIPOKER: "DEF-TCP3", Game.HOLDEM: "DEF-THP2"}


def serpentine_places() -> dict[int, list[int]]:
    """PGP-A10f read literally: cards 1, 3, 5, 7 of each group left to right (group 1 to 7),
    cards 2, 4, 6 right to left. Returns group -> the places of its 7 cards."""
    places: dict[int, list[int]] = defaultdict(list)
    place = 0
    for card in range(1, 8):
        groups = range(1, 8) if card % 2 == 1 else range(7, 0, -1)
        for group in groups:
            place += 1
            places[group].append(place)
    return dict(places)


def group_one_position(total: int) -> int:
    """PGP-A11b with the dealer banking at position 0: count the banker as 1, clockwise."""
    return (total - 1) % 7


@dataclass
class TableStream:
    table_id: str
    game: Game
    arrivals: list[Event] = field(default_factory=list)  # valid events, as delivered
    invalid: int = 0

    @property
    def events(self) -> list[Event]:
        """Each event once, in seq order: what a round aggregate works from."""
        unique = {e.event_id: e for e in self.arrivals}
        return sorted(unique.values(), key=lambda e: e.seq)

    def rounds(self) -> dict[str, list[Event]]:
        out: dict[str, list[Event]] = defaultdict(list)
        for event in self.events:
            if event.round_id is not None:
                out[event.round_id].append(event)
        return dict(out)


def split_tables(messages: Iterable[Message]) -> dict[str, TableStream]:
    tables: dict[str, TableStream] = {}
    for key, value in messages:
        try:
            event = parse_event(value)
        except InvalidEvent:
            stream = tables.get(key)
            if stream is not None:
                stream.invalid += 1
            continue
        stream = tables.setdefault(key, TableStream(key, event.game))
        stream.arrivals.append(event)
    return tables


def cards(texts: Sequence[str]) -> tuple[int, ...]:
    return tuple(parse_card(t, allow_joker=True) for t in texts)


# ---- stream ----------------------------------------------------------------------------------


def stream_findings(stream: TableStream) -> list[Finding]:
    """Duplicates, out-of-order events and gaps, by the policy of docs/events.md."""
    findings: list[Finding] = []
    seen: set[str] = set()
    highest = 0
    pending: dict[int, str] = {}  # missing seq -> event_id of the event after the gap
    for event in stream.arrivals:
        event_id = str(event.event_id)
        if event_id in seen:
            findings.append(("EVT-DUP", event_id))
            continue
        seen.add(event_id)
        if event.seq < highest:
            findings.append(("EVT-ORDER", event_id))
            pending.pop(event.seq, None)
        else:
            for missing in range(highest + 1, event.seq):
                pending[missing] = event_id
            highest = event.seq
        if event.event_type in ("round_ended", "round_voided", "table_closed"):
            findings += [("EVT-GAP", after) for after in dict.fromkeys(pending.values())]
            pending.clear()
    return findings


# ---- procedure (each over one table's events in seq order) -----------------------------------


def deck_counts(stream: TableStream) -> list[Finding]:
    return [
        (DECK_RULE[stream.game], str(e.event_id))
        for e in stream.events
        if isinstance(e, DeckCounted) and e.count != DECK_SIZE[stream.game]
    ]


def cuts(stream: TableStream) -> list[Finding]:
    """A shuffle then a cut before every round (PGP-A8, TCP-A7, ALL-4)."""
    findings = []
    state = "none"
    for event in stream.events:
        if isinstance(event, ShuffleCompleted):
            state = "shuffled"
        elif isinstance(event, CutCompleted) and state == "shuffled":
            state = "cut"
        elif isinstance(event, RoundStarted):
            if state != "cut":
                findings.append((CUT_RULE[stream.game], str(event.event_id)))
            state = "none"
    return findings


def new_decks(stream: TableStream) -> list[Finding]:
    """A new deck before its first round, read from the articles: Pai Gow's supervisor inspects
    it (PGP-A6a for the first deck of the day, PGP-A6b at each deck change); Tripóker's and
    Hold'em's is shown, turned, washed, shuffled and cut in that order (TCP-A6, THP-A6: the turn
    has no event; a missing shuffle or cut is the every-round rule's, `cuts`)."""
    findings: list[Finding] = []
    steps: dict[str, list[str]] = defaultdict(list)  # deck -> its steps as first seen
    dealt: set[str] = set()
    first_of_day = True
    names = {
        DeckInspected: "show",
        DeckWashed: "wash",
        ShuffleCompleted: "shuffle",
        CutCompleted: "cut",
    }
    for event in stream.events:
        if isinstance(event, TableOpened):
            first_of_day = True
        elif isinstance(event, DeckOpened):
            steps[event.deck_id] = []
            dealt.discard(event.deck_id)
        elif (
            isinstance(event, DeckInspected | DeckWashed | ShuffleCompleted | CutCompleted)
            and event.deck_id not in dealt
        ):
            done = steps[event.deck_id]
            if names[type(event)] not in done:
                done.append(names[type(event)])
        elif isinstance(event, RoundStarted) and event.deck_id not in dealt:
            dealt.add(event.deck_id)
            done = steps.pop(event.deck_id, [])
            if stream.game is Game.PAI_GOW:
                if "show" not in done:
                    findings.append(("PGP-A6a" if first_of_day else "PGP-A6b", str(event.event_id)))
            else:
                wanted = [s for s in ("show", "wash", "shuffle", "cut") if s in done]
                if "show" not in done or "wash" not in done or done != wanted:
                    rule = "TCP-A6" if stream.game is Game.TRIPOKER else "THP-A6"
                    findings.append((rule, str(event.event_id)))
            first_of_day = False
    return findings


def duplicate_cards(events: Sequence[Event]) -> list[Finding]:
    seen: set[str] = set()
    findings = []
    for event in events:
        if isinstance(event, CardsDealt):
            for card in event.cards:
                if card in seen:
                    findings.append(("ALL-3", str(event.event_id)))
                seen.add(card)
    return findings


def pai_gow_deal(events: Sequence[Event]) -> list[Finding]:
    findings: list[Finding] = []
    expected = serpentine_places()
    groups = [e for e in events if isinstance(e, CardsDealt) and e.recipient is Recipient.GROUP]
    for event in groups:
        if len(event.cards) != 7:
            findings.append(("PGP-A10a", str(event.event_id)))
    for event in groups:
        assert event.group is not None
        if list(event.deal_order) != expected[event.group][: len(event.deal_order)]:
            findings.append(("PGP-A10f", str(event.event_id)))
            break
    for event in events:
        is_discard = isinstance(event, CardsDealt) and event.recipient is Recipient.DISCARD
        if is_discard and len(event.cards) != 4:
            findings.append(("PGP-A10d", str(event.event_id)))
    closed = False
    for event in events:
        if isinstance(event, BetsClosed):
            closed = True
        elif isinstance(event, BetPlaced) and closed:
            findings.append(("PGP-A9c", str(event.event_id)))
    return findings


def pai_gow_hands(events: Sequence[Event]) -> dict[int, tuple[int, ...]]:
    """Position -> the 7 (or fewer) cards it received, from the dice (PGP-A11b, A12a)."""
    groups = {
        e.group: cards(e.cards)
        for e in events
        if isinstance(e, CardsDealt) and e.recipient is Recipient.GROUP and e.group is not None
    }
    rolls = [e for e in events if isinstance(e, DiceRolled) and e.valid]
    first = group_one_position(sum(rolls[-1].dice))
    return {(first + g - 1) % 7: groups[g] for g in groups}


def unbet_groups_unseen(events: Sequence[Event]) -> list[Finding]:
    """PGP-A12b: only the dealer and the positions with a bet show (set) their cards."""
    wagers = {e.seat for e in events if isinstance(e, BetPlaced)}
    return [
        ("PGP-A12b", str(e.event_id))
        for e in events
        if isinstance(e, HandSet) and e.seat and e.seat not in wagers
    ]


def house_way_followed(events: Sequence[Event], profile: PaiGowProfile) -> list[Finding]:
    hands = pai_gow_hands(events)
    for event in events:
        if isinstance(event, HandSet) and event.seat == 0:
            way = house_way(hands[0], profile.house_way)
            low = sorted(13 if c == JOKER else c >> 2 for c in cards(event.low))
            if low != sorted(13 if c == JOKER else c >> 2 for c in way.low):
                return [("PGP-A13c", str(event.event_id))]
    return []


def _compare_payouts(game: Game, events: Sequence[Event], settled: Iterable) -> list[Finding]:
    expected = {(s.seat, s.spot.value): recorded_payout(s) for s in settled}
    findings = []
    for event in events:
        if isinstance(event, PayoutRecorded):
            seen = (event.collected_cents, event.paid_cents, event.commission_cents)
            if expected.get((event.seat, event.spot.value)) != seen:
                findings.append((PAY_RULE[game], str(event.event_id)))
    return findings


def pai_gow_payment_order(events: Sequence[Event]) -> list[Finding]:
    """PGP-A17d read from the text: "pay only after every hand is shown, from one end of the
    table to the other". Every bettor's hand and the dealer's (position 0) are shown (hand_set,
    or a surrender) before the first payment, a bettor who sets none having surrendered
    (DEF-PGP4); the seats are paid in one direction along the table (the dealer's position 0
    is not along it)."""
    findings: list[Finding] = []
    paid = [e for e in events if isinstance(e, PayoutRecorded)]
    if not paid:
        return findings
    first_paid = paid[0].seq
    hands = {e.seat for e in events if isinstance(e, HandSet)}
    needed = {e.seat for e in events if isinstance(e, BetPlaced) and e.seat in hands} | {0}
    shown = {
        e.seat
        for e in events
        if e.seq < first_paid
        and (
            isinstance(e, HandSet)
            or (isinstance(e, PlayerDecided) and e.decision is Decision.SURRENDER)
        )
    }
    if needed - shown:
        findings.append(("PGP-A17d", str(paid[0].event_id)))
    # along the table: the winnings paid (a loser's bet goes to the tray at once, PGP-A17a)
    seats = [(e.seat, e) for e in paid if e.seat != 0 and e.paid_cents > 0]
    steps = [(b[0] > a[0]) - (b[0] < a[0]) for a, b in itertools.pairwise(seats)]
    moves = [(step, e) for step, (_, e) in zip(steps, seats[1:], strict=True) if step]
    for (first, _), (step, event) in itertools.product(moves[:1], moves[1:]):
        if step != first:
            findings.append(("PGP-A17d", str(event.event_id)))
            break
    return findings


def pai_gow_payouts(
    round_id: str, events: Sequence[Event], profile: PaiGowProfile
) -> list[Finding]:
    if not any(e.event_type == "round_ended" for e in events):
        return []
    hands = pai_gow_hands(events)
    wagers = {e.seat: e.amount_cents for e in events if isinstance(e, BetPlaced)}
    sets = {e.seat: e for e in events if isinstance(e, HandSet)}
    surrendered = {e.seat for e in events if isinstance(e, PlayerDecided)}
    seats = []
    for seat, wager in sorted(wagers.items()):
        hand = sets.get(seat)
        seats.append(
            PaiGowSeat(
                seat=seat,
                wager_cents=wager,
                cards=hands[seat],
                hand=None
                if hand is None
                else RulesHandSet(high=cards(hand.high), low=cards(hand.low)),
                surrendered=seat in surrendered,
            )
        )
    game = PaiGowRound(round_id=round_id, dealer_cards=hands[0], seats=tuple(seats))
    try:
        settled = settle_pai_gow(game, profile).settlements
    except RoundError:
        return []  # impossible cards: not settled on them (docs/events.md)
    return _compare_payouts(Game.PAI_GOW, events, settled)


def tripoker_dealer(events: Sequence[Event], profile: TripokerProfile) -> list[Finding]:
    """TCP-A10b: the dealer card the profile exposes face up, the others face down."""
    findings = []
    dealer = [e for e in events if isinstance(e, CardsDealt) and e.recipient is Recipient.DEALER]
    places = sorted(p for e in dealer for p in e.deal_order)
    for event in dealer:
        for place in event.deal_order:
            number = places.index(place) + 1
            if event.face_up != (number in profile.exposed_dealer_cards):
                findings.append(("TCP-A10b", str(event.event_id)))
                break
    return findings


def tripoker_deal(events: Sequence[Event]) -> list[Finding]:
    """TCP-A10a (Art. 10) read from the text: the dealer deals from his left to his right in
    three rounds, each player in play (a seat with a bet) and then the dealer receiving one card
    per round. Seat numbers grow from the dealer's left. Place k of the deal (`deal_order`) must
    therefore go to the k-th recipient of that sequence; the first cards_dealt (in seq order)
    with a card at a place meant for someone else is the finding, one per round."""
    in_play = sorted({e.seat for e in events if isinstance(e, BetPlaced)})
    one_round: list[int | None] = [*in_play, None]  # None: the dealer, last in each round
    meant_for = dict(enumerate(one_round * 3, start=1))
    for event in events:
        if not isinstance(event, CardsDealt):
            continue
        if event.recipient is Recipient.SEAT:
            who: int | None = event.seat
        elif event.recipient is Recipient.DEALER:
            who = None
        else:
            continue
        if any(meant_for.get(place, "nobody") != who for place in event.deal_order):
            return [("TCP-A10a", str(event.event_id))]
    return []


def tripoker_bets(events: Sequence[Event]) -> list[Finding]:
    """TCP-A9c read from the text: to play, a player bets pair plus ("par o más") and/or the
    ante; a seat given cards without either played without a bet (its first cards_dealt)."""
    staked = {
        e.seat for e in events if isinstance(e, BetPlaced) and e.spot.value in ("ante", "pair_plus")
    }
    found: dict[int, str] = {}
    for e in events:
        seat = e.seat if isinstance(e, CardsDealt) and e.recipient is Recipient.SEAT else None
        if seat is not None and seat not in staked:
            found.setdefault(seat, str(e.event_id))
    return [("TCP-A9c", event_id) for event_id in found.values()]


def tripoker_payouts(
    round_id: str, events: Sequence[Event], profile: TripokerProfile
) -> list[Finding]:
    bets: dict[int, dict[str, int]] = defaultdict(dict)
    hands: dict[int, tuple[int, ...]] = {}
    dealer: list[tuple[int, int]] = []
    decisions: dict[int, Decision] = {}
    for e in events:
        if isinstance(e, BetPlaced):
            bets[e.seat][e.spot.value] = e.amount_cents
        elif isinstance(e, CardsDealt) and e.recipient is Recipient.SEAT and e.seat is not None:
            hands[e.seat] = cards(e.cards)
        elif isinstance(e, CardsDealt) and e.recipient is Recipient.DEALER:
            dealer += zip(e.deal_order, cards(e.cards), strict=True)
        elif isinstance(e, PlayerDecided):
            decisions[e.seat] = e.decision
    game = TripokerRound(
        round_id=round_id,
        dealer_cards=tuple(c for _, c in sorted(dealer)),
        seats=tuple(
            TripokerSeat(
                seat=seat,
                ante_cents=bets[seat].get("ante", 0),
                pair_plus_cents=bets[seat].get("pair_plus", 0),
                cards=hands[seat],
                decision=decisions.get(seat),
            )
            for seat in sorted(bets)
        ),
    )
    try:
        settled = settle_tripoker(game, profile).settlements
    except RoundError:
        return []
    return _compare_payouts(Game.TRIPOKER, events, settled)


def holdem_payouts(
    round_id: str, events: Sequence[Event], profile: HoldemProfile, meter: int
) -> list[Finding]:
    bets: dict[int, dict[str, int]] = defaultdict(dict)
    holes: dict[int, tuple[int, ...]] = {}
    dealer: tuple[int, ...] = ()
    board: list[int] = []
    decisions: dict[int, Decision] = {}
    for e in events:
        if isinstance(e, BetPlaced):
            bets[e.seat][e.spot.value] = e.amount_cents
        elif isinstance(e, CardsDealt) and e.recipient is Recipient.SEAT and e.seat is not None:
            holes[e.seat] = cards(e.cards)
        elif isinstance(e, CardsDealt) and e.recipient is Recipient.DEALER:
            dealer = cards(e.cards)
        elif isinstance(e, CommunityDealt):
            board += cards(e.cards)
        elif isinstance(e, PlayerDecided):
            decisions[e.seat] = e.decision
    called = Decision.CALL in decisions.values()
    game = HoldemRound(
        round_id=round_id,
        dealer_hole=dealer if called else (),
        board=tuple(board),
        seats=tuple(
            HoldemSeat(
                seat=seat,
                ante_cents=bets[seat]["ante"],
                progressive_cents=bets[seat].get("progressive", 0),
                hole=holes[seat],
                decision=decisions[seat],
            )
            for seat in sorted(bets)
        ),
        meter_cents=meter,
    )
    settled = settle_holdem(game, profile).settlements
    return _compare_payouts(Game.HOLDEM, events, settled)


def procedure_findings(stream: TableStream) -> list[Finding]:
    """Every procedure check of the table, in seq order, over its valid, de-duplicated events."""
    findings = deck_counts(stream) + cuts(stream) + new_decks(stream)
    profile = load_profile(
        {
            Game.PAI_GOW: "pai-gow/pe-1999",
            Game.TRIPOKER: "tripoker/pe-2005",
            Game.HOLDEM: "holdem/pe-2007",
        }[stream.game]
    )
    meter = 0
    last_deck = None
    for event in stream.events:
        if isinstance(event, ProgressiveMeterReset):
            meter = event.meter_cents
    for round_id, events in stream.rounds().items():
        findings += duplicate_cards(events)
        if isinstance(profile, PaiGowProfile):
            findings += pai_gow_deal(events)
            if any(isinstance(e, DiceRolled) for e in events):
                findings += unbet_groups_unseen(events)
                findings += house_way_followed(events, profile)
                findings += pai_gow_payouts(round_id, events, profile)
                findings += pai_gow_payment_order(events)
        elif isinstance(profile, TripokerProfile):
            findings += tripoker_deal(events)
            findings += tripoker_bets(events)
            findings += tripoker_dealer(events, profile)
            findings += tripoker_payouts(round_id, events, profile)
        else:
            start = events[0]
            assert isinstance(start, RoundStarted)
            if start.deck_id == last_deck:  # THP-A2d, DEF-THP6
                findings.append(("THP-A2d", str(start.event_id)))
            last_deck = start.deck_id
            findings += holdem_payouts(round_id, events, profile, meter)
            meters = [e.meter_cents for e in events if isinstance(e, ProgressiveMeterRecorded)]
            meter = meters[-1]
    return findings


def all_findings(tables: dict[str, TableStream]) -> Counter[Finding]:
    found: Counter[Finding] = Counter()
    for stream in tables.values():
        found.update(stream_findings(stream))
        found.update(procedure_findings(stream))
    return found
