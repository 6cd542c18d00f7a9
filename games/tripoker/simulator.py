"""A simulated Tripóker table under a rule profile (default `tripoker/pe-2005`, TCP-A5..A11).

Three rounds of dealing with the dealer last, the profile's exposed dealer card, play or fold.
"""

from __future__ import annotations

from typing import Any

from events import Game
from events.models import Decision
from games.simulation.faults import Fault
from games.simulation.stream import Pending, new_pending
from games.simulation.table import CARD_TEXT, TableSim
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, plays_queen_six_four, settle_tripoker


class TripokerTable(TableSim):
    game = Game.TRIPOKER
    code = "TP"
    seats = 7
    rounds_per_hour = 55
    unit_choices = (1_000, 2_000, 5_000, 10_000, 20_000)
    profile_name = "tripoker/pe-2005"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.profile = TripokerProfile.load(self.profile_name)
        self.limits = {"ante": (1_000, 100_000), "pair_plus": (1_000, 50_000)}

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

        # TCP-A10a: three rounds, one card each, left to right, the dealer's last.
        seats = sorted(set(antes) | set(pair_plus))
        n = len(seats) + 1
        pack = self.np_rng.permutation(52).tolist()
        hands = {seat: [pack[i], pack[n + i], pack[2 * n + i]] for i, seat in enumerate(seats)}
        dealer = [pack[n - 1], pack[2 * n - 1], pack[3 * n - 1]]
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
                            "deal_order": [i + 1, n + i + 1, 2 * n + i + 1],
                        },
                        (Fault.DUPLICATE_CARD,) if seat == dup_seat else (),
                        seat,
                    ),
                )
            )
        events += self._dealer_cards(dealer, n)

        decisions: dict[int, Decision | None] = {}
        for seat in seats:
            if seat not in antes:
                decisions[seat] = None  # pair plus only: stays in without a play bet (DEF-TCP6)
                continue
            plays = plays_queen_six_four(hands[seat])  # TCP-A11a
            if rng.random() < 0.04:
                plays = not plays
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

    def _bet(self, seat: int, spot: str, amount: int, ref: str) -> Pending:
        payload = {"seat": seat, "spot": spot, "amount_cents": amount, "player_ref": ref}
        return new_pending(Pending, ("bet_placed", self.console, payload, (), seat))

    def _dealer_cards(self, dealer: list[int], n: int) -> list[Pending]:
        """The dealer's cards: those the profile exposes face up (TCP-A10b), the rest down."""
        exposed = set(self.profile.exposed_dealer_cards)
        faults: tuple[Fault, ...] = ()
        if exposed and self.chance(Fault.EXPOSED_CARD):
            exposed, faults = set(), (Fault.EXPOSED_CARD,)
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
                            "deal_order": [k * n for k in picked],
                        },
                        faults if not face_up else (),
                    )
                )
        return events
