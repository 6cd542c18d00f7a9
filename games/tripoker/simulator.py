"""A simulated Tripóker table under a rule profile (default `tripoker/pe-2005`, TCP-A5..A11).

Three rounds of dealing with the dealer last, the profile's exposed dealer card, play or fold.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from events import Game
from events.models import Decision
from games.simulation.faults import Fault
from games.simulation.players import Archetype
from games.simulation.stream import Pending, new_pending
from games.simulation.table import CARD_TEXT, Player, TableSim
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, plays_queen_six_four, settle_tripoker
from games.tripoker.strategy import full_information_plays, strategy

DEALER = -1  # the dealer in a dealing sequence; players are 0.. left to right
# Wrong ways to deal (Fault.DEAL_ORDER): each breaks TCP-A10a at the first seat's cards.
WRONG_DEALS = ("dealer_first", "right_to_left", "hand_by_hand")


def dealing_sequence(players: int, mistake: str | None = None) -> list[int]:
    """Who receives each card, in the order dealt: TCP-A10a is three rounds of one card to each
    player left to right (0, 1, ...), then the dealer (`DEALER`); `mistake` names a wrong way.

    >>> dealing_sequence(2)
    [0, 1, -1, 0, 1, -1, 0, 1, -1]
    >>> dealing_sequence(2, "dealer_first")[:3]
    [-1, 0, 1]
    """
    left_to_right = list(range(players))
    if mistake == "hand_by_hand":
        return [who for who in [*left_to_right, DEALER] for _ in range(3)]
    if mistake == "dealer_first":
        return [DEALER, *left_to_right] * 3
    if mistake == "right_to_left":
        return [*reversed(left_to_right), DEALER] * 3
    if mistake is not None:
        raise ValueError(f"unknown way to deal: {mistake!r}")
    return [*left_to_right, DEALER] * 3


def deal_places(sequence: list[int]) -> dict[int, list[int]]:
    """Each recipient's 1-based places in a dealing sequence (`deal_order`)."""
    places: dict[int, list[int]] = {}
    for place, who in enumerate(sequence, start=1):
        places.setdefault(who, []).append(place)
    return places


PlayFunction = Callable[[Sequence[int], Sequence[int], int, int], bool]
_DECISION = {True: "play", False: "fold"}


class TripokerTable(TableSim):
    game = Game.TRIPOKER
    code = "TP"
    seats = 7
    rounds_per_hour = 55
    unit_choices = (1_000, 2_000, 5_000, 10_000, 20_000)
    profile_name = "tripoker/pe-2005"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.profile = TripokerProfile.load(self.profile_ref)
        self.limits = {"ante": (1_000, 100_000), "pair_plus": (1_000, 50_000)}
        # The deal-order fault draws from its own generator, so turning it on changes no other
        # draw: every seed's night stays the same but for the deal_order of the faulted rounds.
        self.deal_rng = random.Random(f"{kwargs['seed']}/{self.table_id}/deal_order")
        # Likewise the seat-without-bet fault (TCP-A9c).
        self.unbet_rng = random.Random(f"{kwargs['seed']}/{self.table_id}/seat_without_bet")
        self.exposed_now = False  # this round's exposed dealer card is face up (TCP-A10b)
        self._exposed_plays: PlayFunction | None = None

    def header(self) -> Pending:
        return self.table_opened(self.profile, None, None)

    def open_decks(self) -> list[Pending]:
        # TCP-A5b: jokers out at once; TCP-A6: show, turn, wash (and ALL-3: count 52).
        return self.new_deck(jokers_in_box=2, jokers_kept=0, count=52)

    def play_round(self, round_id: str) -> tuple[list[Pending], list[Pending]]:
        rng = self.rng
        deck_id = self.decks[-1]
        pre, cut_missing = self.shuffle_and_cut(deck_id)  # TCP-A7
        events = [
            Pending(
                "round_started",
                self.console,
                {"deck_id": deck_id, "dealer_id": self.dealer_id, "banker_position": None},
                (Fault.MISSING_CUT,) if cut_missing else (),
            )
        ]
        antes: dict[int, int] = {}
        pair_plus: dict[int, int] = {}
        for seat, player in self.players.items():
            if player is None:
                continue
            style = rng.random()  # TCP-A9c: ante and/or pair plus
            if style < 0.9:
                antes[seat] = self.bet_amount(player.unit_cents, "ante")
                events.append(self._bet(seat, "ante", antes[seat], player.ref))
            if style >= 0.5:
                pair_plus[seat] = self.bet_amount(player.unit_cents, "pair_plus")
                events.append(self._bet(seat, "pair_plus", pair_plus[seat], player.ref))
        events.append(Pending("bets_closed", self.console, {}))

        # TCP-A10a: three rounds, one card each, left to right (ascending seats, from the
        # dealer's left), the dealer's last; a deal_order fault deals them another way.
        seats = sorted(set(antes) | set(pair_plus))
        right = deal_places(dealing_sequence(len(seats)))
        pack = self.np_rng.permutation(52).tolist()
        hands = {seat: [pack[p - 1] for p in right[i]] for i, seat in enumerate(seats)}
        dealer = [pack[p - 1] for p in right[DEALER]]
        # A wrong deal changes the places only: the pack is shuffled at random, so the hands are
        # as random, and every later draw (decisions, payment faults) is the one it would be.
        mistake = self._deal_mistake(len(seats))
        places = deal_places(dealing_sequence(len(seats), mistake)) if mistake else right
        dup_seat = None
        if len(seats) > 1 and self.chance(Fault.DUPLICATE_CARD):
            dup_seat = rng.choice(seats[1:])
        for i, seat in enumerate(seats):
            cards = list(hands[seat])
            if seat == dup_seat:
                # The shoe reads one card as a copy of a card dealt to the first seat: the deck
                # shows a card twice (the payouts follow the cards actually on the table).
                cards[rng.randrange(3)] = hands[seats[0]][rng.randrange(3)]
            events.append(
                new_pending(
                    Pending,
                    (
                        "cards_dealt",
                        self.shoe,
                        {
                            "recipient": "seat",
                            "seat": seat,
                            "group": None,
                            "cards": [CARD_TEXT[c] for c in cards],
                            "face_up": False,
                            "deal_order": places[i],
                        },
                        ((Fault.DUPLICATE_CARD,) if seat == dup_seat else ())
                        + ((Fault.DEAL_ORDER,) if mistake and i == 0 else ()),
                        seat,
                    ),
                )
            )
        events += self._dealer_cards(dealer, places[DEALER])
        events += self._seat_without_bet(seats, pack, wrong_deal=mistake is not None)

        decisions: dict[int, Decision | None] = {}
        for seat in seats:
            if seat not in antes:
                decisions[seat] = None  # pair plus only: stays in without a play bet (DEF-TCP6)
                continue
            plays = plays_queen_six_four(hands[seat])  # TCP-A11a
            if rng.random() < 0.04:  # drawn for every player, whatever the archetype
                plays = not plays
            player = self.players[seat]
            if player is not None and player.archetype is not Archetype.TYPICAL:
                plays = self._archetype_plays(
                    round_id, seat, player, hands[seat], dealer, antes[seat], pair_plus.get(seat, 0)
                )
            decisions[seat] = Decision.PLAY if plays else Decision.FOLD
            payload = {
                "seat": seat,
                "decision": "play" if plays else "fold",
                "amount_cents": antes[seat] * self.profile.play_multiple if plays else 0,
            }
            events.append(new_pending(Pending, ("player_decided", self.console, payload, (), seat)))
        events.append(  # TCP-A11c
            Pending("dealer_revealed", self.shoe, {"cards": [CARD_TEXT[c] for c in dealer]})
        )
        settled = settle_tripoker(
            TripokerRound(
                round_id=round_id,
                dealer_cards=tuple(dealer),
                seats=tuple(
                    TripokerSeat(
                        seat=seat,
                        ante_cents=antes.get(seat, 0),
                        pair_plus_cents=pair_plus.get(seat, 0),
                        cards=tuple(hands[seat]),
                        decision=decisions[seat],
                    )
                    for seat in seats
                ),
            ),
            self.profile,
        )
        # A hand holding a copied card cannot be settled from the events: no payment fault there.
        events += self.payout_events(settled.settlements, "ante", payment_faults=dup_seat is None)
        events.append(Pending("round_ended", self.console, {}))
        return pre, events

    def _archetype_plays(
        self,
        round_id: str,
        seat: int,
        player: Player,
        hand: Sequence[int],
        dealer: Sequence[int],
        ante: int,
        pair_plus: int,
    ) -> bool:
        """Play or fold by the player's archetype (`games.simulation.players`): basic queen-6-4,
        exposed-optimal the exact best with the exposed card when it is face up, a hole-carder
        who sees the dealer's cards the full-information best (logged), else exposed-optimal."""
        archetype = player.archetype
        if archetype is Archetype.BASIC:
            return plays_queen_six_four(hand)
        if archetype is Archetype.FLASH_PARTNER:
            legitimate = plays_queen_six_four(hand)
        elif self.exposed_now:
            if self._exposed_plays is None:
                self._exposed_plays = strategy(self.profile)
            legitimate = self._exposed_plays(hand, dealer, ante, pair_plus)
        else:
            legitimate = plays_queen_six_four(hand)
        if not self.sees_hidden(player):
            return legitimate
        plays = full_information_plays(self.profile, hand, dealer, ante, pair_plus)
        self.note_hidden(round_id, seat, player, _DECISION[plays], _DECISION[legitimate])
        return plays

    def _bet(self, seat: int, spot: str, amount: int, ref: str) -> Pending:
        payload = {"seat": seat, "spot": spot, "amount_cents": amount, "player_ref": ref}
        return new_pending(Pending, ("bet_placed", self.console, payload, (), seat))

    def _deal_mistake(self, players: int) -> str | None:
        """The wrong way this round is dealt (Fault.DEAL_ORDER), or None: dealt right."""
        rate = self.rates.get(Fault.DEAL_ORDER, 0.0)
        if players == 0 or rate <= 0.0 or self.deal_rng.random() >= rate:
            return None
        # Right to left is the right order when one player is dealt to.
        return self.deal_rng.choice(WRONG_DEALS if players > 1 else WRONG_DEALS[::2])

    def _seat_without_bet(
        self, seats: list[int], pack: list[int], *, wrong_deal: bool
    ) -> list[Pending]:
        """Fault.SEAT_WITHOUT_BET: an empty seat dealt the next three cards of the pack at the
        places after the deal (TCP-A9c, and TCP-A10a: not a place of the deal). Not in a round
        already dealt wrong, whose TCP-A10a finding it would hide."""
        rate = self.rates.get(Fault.SEAT_WITHOUT_BET, 0.0)
        if rate <= 0.0 or self.unbet_rng.random() >= rate or wrong_deal:
            return []
        empty = [seat for seat in range(1, self.seats + 1) if seat not in seats]
        if not empty:
            return []
        seat = self.unbet_rng.choice(empty)
        used = 3 * len(seats) + 3
        payload = {
            "recipient": "seat",
            "seat": seat,
            "group": None,
            "cards": [CARD_TEXT[c] for c in pack[used : used + 3]],
            "face_up": False,
            "deal_order": [used + 1, used + 2, used + 3],
        }
        faults = (Fault.SEAT_WITHOUT_BET, (Fault.SEAT_WITHOUT_BET, "TCP-A10a"))
        return [new_pending(Pending, ("cards_dealt", self.shoe, payload, faults, seat))]

    def _dealer_cards(self, dealer: list[int], places: list[int]) -> list[Pending]:
        """The dealer's cards: those the profile exposes face up (TCP-A10b), the rest down."""
        exposed = set(self.profile.exposed_dealer_cards)
        faults: tuple[Fault, ...] = ()
        if exposed and self.chance(Fault.EXPOSED_CARD):
            exposed, faults = set(), (Fault.EXPOSED_CARD,)
        self.exposed_now = bool(exposed)
        events = []
        for face_up in (False, True):
            picked = [k for k in (1, 2, 3) if (k in exposed) == face_up]
            if picked:
                events.append(
                    Pending(
                        "cards_dealt",
                        self.shoe,
                        {
                            "recipient": "dealer",
                            "seat": None,
                            "group": None,
                            "cards": [CARD_TEXT[dealer[k - 1]] for k in picked],
                            "face_up": face_up,
                            "deal_order": [places[k - 1] for k in picked],
                        },
                        faults if not face_up else (),
                    )
                )
        return events
