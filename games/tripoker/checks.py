"""Tripóker's procedure checks on a round's events: three cards to each hand (TCP-A8), the order
of the deal (TCP-A10a), the dealer's exposed card (TCP-A10b) and a bet for every seat dealt
(TCP-A9c), and the play bet (DEF-TCP2)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence, Set

from events.models import (
    BetPlaced,
    CardsDealt,
    Decision,
    Event,
    PlayerDecided,
    Recipient,
    RoundVoided,
    Spot,
)
from games.base import RoundEvents, decision_amounts
from games.tripoker.profile import TripokerProfile
from rules.procedure import Finding, Severity, finding_at
from rules.profile import Profile


def three_card_hands(events: Sequence[Event]) -> list[Finding]:
    """Every Tripóker hand has exactly 3 cards (TCP-A8, TCP-A10a)."""
    counts: Counter[tuple[str, int | None]] = Counter()
    anchors: dict[tuple[str, int | None], CardsDealt] = {}
    for event in events:
        if isinstance(event, CardsDealt) and event.recipient in (Recipient.SEAT, Recipient.DEALER):
            key = (event.recipient.value, event.seat)
            counts[key] += len(event.cards)
            anchors.setdefault(key, event)
    return [
        finding_at(
            anchors[key],
            "TCP-A8",
            "three_cards",
            Severity.CRITICAL,
            recipient=key[0],
            seat=key[1],
            cards=count,
        )
        for key, count in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0))
        if count != 3
    ]


DEALER_KEY: tuple[str, int | None] = (Recipient.DEALER.value, None)


def tripoker_deal_order(events: Sequence[Event]) -> list[Finding]:
    """The deal's order (TCP-A10a; Art. 10: "La distribución de las cartas la hace el dealer de
    su izquierda a su derecha en tres rondas. En cada ronda, cada participante en juego y el
    dealer recibe una carta. La última carta que se reparte en cada ronda corresponde al
    dealer."): three rounds; in each, one card to every player in play, from the dealer's left
    to the dealer's right, then one to the dealer.

    The text leaves three things to us (see also docs/events.md, Tripóker):
    - the players "en juego" are the seats with a bet (ante and/or pair plus, TCP-A9c), however
      they decide later; a seat without a bet has no place in the deal;
    - "from his left to his right" is the dealer's left and right (the English summary's "left
      to right" does not say whose), and seats are numbered from the dealer's left, as Pai Gow's
      positions are (docs/events.md; PGP-A10b, A10f go group 1 to 7 the same way): ascending
      seat numbers, as the simulator deals;
    - the article orders the recipients; `deal_order` numbers the places, and they are judged
      exactly, as PGP-A10f's are: with n players, the player in place i (1-based, left to right)
      gets i, n+1+i, 2n+2+i and the dealer n+1, 2n+2, 3n+3. A gap in the numbering (a place no
      event shows: a card dealt to nobody recorded) is a breach too. Burn and discard cards
      (Tripóker has none) are not judged.

    One finding per round: at the first `cards_dealt` (stream order) to a seat without a bet,
    else at the first whose places are not its recipient's; a player in play dealt no card at
    all, or a dealer dealt none, is reported at the round's first dealt card. Not judged, so as
    not to report one mistake twice or on a round nobody settles: a voided round (its bets are
    returned, ALL-5), a round where a hand does not hold three cards (TCP-A8 reports it) and a
    round with no card dealt to a player or the dealer. Never raises: any places the contract
    admits (duplicates, gaps, numbers beyond the deal) are judged, not trusted."""
    if any(isinstance(e, RoundVoided) for e in events):
        return []
    dealt = [
        e
        for e in events
        if isinstance(e, CardsDealt) and e.recipient in (Recipient.SEAT, Recipient.DEALER)
    ]
    if not dealt:
        return []
    counts: Counter[tuple[str, int | None]] = Counter()
    for event in dealt:
        counts[_recipient_key(event)] += len(event.cards)
    if any(count != 3 for count in counts.values()):
        return []  # TCP-A8 (three_card_hands) reports the hand
    players = sorted({e.seat for e in events if isinstance(e, BetPlaced)})
    n = len(players)
    expected: dict[tuple[str, int | None], list[int]] = {
        (Recipient.SEAT.value, seat): [i, n + 1 + i, 2 * n + 2 + i]
        for i, seat in enumerate(players, start=1)
    }
    expected[DEALER_KEY] = [n + 1, 2 * n + 2, 3 * n + 3]
    for event in dealt:  # a seat without a bet is not in play: no place in the deal is its
        key = _recipient_key(event)
        if key not in expected:
            return [_deal_order_finding(event, key, None, event.deal_order, players)]
    left: dict[tuple[str, int | None], Counter[int]] = {}
    for event in dealt:
        key = _recipient_key(event)
        wanted = expected[key]
        remaining = left.setdefault(key, Counter(wanted))
        seen = Counter(event.deal_order)
        if seen - remaining:
            return [_deal_order_finding(event, key, wanted, event.deal_order, players)]
        remaining -= seen
    for key, wanted in expected.items():
        if key not in left:  # a player in play, or the dealer, dealt nothing
            return [_deal_order_finding(dealt[0], key, wanted, [], players)]
    return []


def _recipient_key(event: CardsDealt) -> tuple[str, int | None]:
    return (event.recipient.value, event.seat)


def _deal_order_finding(
    event: CardsDealt,
    key: tuple[str, int | None],
    expected: list[int] | None,
    seen: Sequence[int],
    players: list[int],
) -> Finding:
    return finding_at(
        event,
        "TCP-A10a",
        "deal_order",
        Severity.MAJOR,
        recipient=key[0],
        seat=key[1],
        expected=expected,  # None: a seat without a bet is dealt no card
        seen=list(seen),
        players=players,
    )


def tripoker_exposed_card(events: Sequence[Event], exposed: Set[int]) -> list[Finding]:
    """The dealer's cards numbered `exposed` (by deal order, 1..3) are dealt face up and the
    others face down (TCP-A10b under `pe-2005`: the third; `standard`: none)."""
    # Sorted on the deal order alone: two cards given the same place (a device fault) keep
    # their stream order rather than comparing the events themselves, which raised TypeError.
    dealt = sorted(
        (
            (order, event)
            for event in events
            if isinstance(event, CardsDealt) and event.recipient is Recipient.DEALER
            for order in event.deal_order
        ),
        key=lambda pair: pair[0],
    )
    findings: list[Finding] = []
    for number, (_, event) in enumerate(dealt, start=1):
        should_be_up = number in exposed
        if event.face_up != should_be_up:
            findings.append(
                finding_at(
                    event,
                    "TCP-A10b",
                    "dealer_exposed_card",
                    Severity.MAJOR,
                    card_number=number,
                    expected_face_up=should_be_up,
                )
            )
    return findings


TCP_A9C_SPOTS = frozenset({Spot.ANTE, Spot.PAIR_PLUS})


def seats_without_bet(events: Sequence[Event]) -> list[Finding]:
    """To play, a player bets pair plus and/or the ante (TCP-A9c): a seat dealt cards (it plays
    the round) with no `bet_placed` on `ante` or `pair_plus` in the round breaks it.

    Decided: a bet on another spot (`play`, or a spot of another game) is not TCP-A9c's bet; a
    seat's bet counts wherever it sits in the round's stream (the Tripóker page sets no moment
    when betting closes); a voided round is not judged (its
    bets are returned, ALL-5, nobody played it). The limits are ALL-1's, chips ALL-1's. The
    rules engine settles the round without such a seat (its cards win or lose nothing). One
    finding per seat, at its first `cards_dealt`. A seat dealt cards without any bet has no
    place in the deal either, which TCP-A10a's check reports on its own: two rules, two rows."""
    if any(isinstance(e, RoundVoided) for e in events):
        return []
    with_bet = {e.seat for e in events if isinstance(e, BetPlaced) and e.spot in TCP_A9C_SPOTS}
    first: dict[int, CardsDealt] = {}
    for event in events:
        if (
            isinstance(event, CardsDealt)
            and event.recipient is Recipient.SEAT
            and event.seat is not None
            and event.seat not in with_bet
        ):
            first.setdefault(event.seat, event)
    return [
        finding_at(
            event,
            "TCP-A9c",
            "seat_without_bet",
            Severity.MAJOR,
            seat=seat,
            spots=sorted(
                {e.spot.value for e in events if isinstance(e, BetPlaced) and e.seat == seat}
            ),
        )
        for seat, event in sorted(first.items())
    ]


def plays_without_ante(kinds: RoundEvents) -> list[Finding]:
    """The play bet is the ante's multiple (DEF-TCP2): a seat with no ante in the round has none
    to make (a pair-plus-only player stays in without one, DEF-TCP6). A seat deciding `play`, or
    recording a play amount, with no ante breaks it; the consumer returns the amount (it is in
    no settled bet) and this finding names it. None for a voided round (ALL-5)."""
    if kinds.of(RoundVoided):
        return []
    anted = kinds.seats_betting(Spot.ANTE)
    return [
        finding_at(
            event, "DEF-TCP2", "play_without_ante", Severity.MAJOR,
            seat=event.seat,
            decision=event.decision.value,
            play_cents=event.amount_cents,
        )
        for event in kinds.of(PlayerDecided)
        if event.seat not in anted and (event.decision is Decision.PLAY or event.amount_cents)
    ]  # fmt: skip


def round_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    findings = three_card_hands(kinds.all)
    findings += tripoker_deal_order(kinds.all)
    findings += seats_without_bet(kinds.all)
    findings += plays_without_ante(kinds)
    if isinstance(profile, TripokerProfile):
        findings += tripoker_exposed_card(kinds.all, set(profile.exposed_dealer_cards))
        findings += decision_amounts(kinds, Decision.PLAY, profile.play_multiple, "DEF-TCP2")
    return findings
