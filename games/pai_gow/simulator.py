"""A simulated Pai Gow Poker table, article by article of the 1999 regulation (PGP-A6..A17).

Deals, dice, house way and settlement come from `games.pai_gow.rules`; this module only plays
them out.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from events import Game
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import (
    DEALER,
    POSITIONS,
    HandSet,
    PaiGowRound,
    PaiGowSeat,
    foul_rules,
    group_one_position,
    house_way,
    serpentine_deal_order,
    settle_pai_gow,
)
from games.simulation.faults import FAULTS, Fault
from games.simulation.players import Archetype
from games.simulation.stream import Pending, new_pending
from games.simulation.table import CARD_TEXT, TableSim
from rules.cards import JOKER

SERPENTINE = serpentine_deal_order()
# The wrong-order fault: each group dealt whole before the next (not PGP-A10f).
GROUP_BY_GROUP = tuple((group, card) for group in range(1, 8) for card in range(1, 8))
# Deal order -> for each group (index 0 unused), the places in the pack its cards come from.
_DEALT = {
    order: tuple(
        tuple(k for k, (to, _) in enumerate(order) if to == group) for group in range(POSITIONS + 1)
    )
    for order in (SERPENTINE, GROUP_BY_GROUP)
}
FAIR_DIE = (1, 1, 1, 1, 1, 1)
BIASED_DIE = (3, 3, 3, 3, 3, 5)  # a six 5/20 = 1/4 of the time, each other face 3/20


def _ranks(cards: Sequence[int]) -> list[int]:
    return sorted(13 if c == JOKER else c >> 2 for c in cards)


def _text(cards: Sequence[int]) -> list[str]:
    return [CARD_TEXT[c] for c in cards]


_SPLITS = tuple(combinations(range(7), 2))  # the 21 ways to choose the low hand's two cards


def _split(cards: Sequence[int], low: tuple[int, int]) -> HandSet:
    i, j = low
    return HandSet(
        high=tuple(c for k, c in enumerate(cards) if k != i and k != j), low=(cards[i], cards[j])
    )


class PaiGowTable(TableSim):
    game = Game.PAI_GOW
    code = "PG"
    seats = 6  # positions 1..6; position 0 is the dealer's (PGP-A11b counts it too)
    rounds_per_hour = 30
    unit_choices = (2_000, 3_000, 5_000, 10_000, 20_000, 50_000)
    profile_name = "pai-gow/pe-1999"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.profile = PaiGowProfile.load(self.profile_ref)
        self.limits = {"main": (2_000, 200_000)}
        self.verify_before_next = False
        # The PGP-A17d faults draw from their own generator: turning them on changes no other
        # draw of the night.
        self.pay_rng = random.Random(f"{kwargs['seed']}/{self.table_id}/payment_order")
        self.die = FAIR_DIE
        if self.chance(Fault.BIASED_DICE):
            self.die = BIASED_DIE
            self.stream.record(Fault.BIASED_DICE, round_id=None)

    def header(self) -> Pending:
        return self.table_opened(self.profile, None, self.profile.commission_unit_cents)

    def open_decks(self) -> list[Pending]:
        # PGP-A6d: a box with two jokers keeps one; PGP-A7a: 53 cards.
        return self.new_deck(jokers_in_box=2, jokers_kept=1, count=53)

    def after_dealer_change(self) -> list[Pending]:
        return self.verify(self.decks[-1], 53)  # PGP-A7c

    # ---- one round ----------------------------------------------------------------------------

    def play_round(self, round_id: str) -> tuple[list[Pending], list[Pending]]:
        rng = self.rng
        pre: list[Pending] = []
        if self.prep_chance(Fault.DECK_CHANGE_UNINSPECTED):  # PGP-A6b: counted, washed, not seen
            pre += self.change_deck(jokers_in_box=2, jokers_kept=1, count=53)
            self.verify_before_next = False  # the new deck was just counted and washed
        deck_id = self.decks[-1]
        if self.verify_before_next:  # PGP-A7c: after a voided round
            pre += self.verify(deck_id, 53)
            self.verify_before_next = False
        shuffle, cut_missing = self.shuffle_and_cut(deck_id)
        pre += shuffle

        events = [
            Pending(
                "round_started",
                self.console,
                {"deck_id": deck_id, "dealer_id": self.dealer_id, "banker_position": DEALER},
                (Fault.MISSING_CUT,) if cut_missing else (),
            )
        ]
        wagers: dict[int, int] = {}
        for seat, player in self.players.items():
            if player is None:
                continue
            wagers[seat] = self.bet_amount(player.unit_cents, "main")
            events.append(self._bet(seat, wagers[seat], player.ref))

        # The deal: 7 groups of 7 in the serpentine order (PGP-A10a, A10f), 4 left (A10d).
        pack = self.np_rng.permutation(53).tolist()
        serpentine_fault = self.chance(Fault.SERPENTINE)
        order = GROUP_BY_GROUP if serpentine_fault else SERPENTINE
        dealt = _DEALT[order]  # for each group (1..7), the places in the pack of its cards
        groups = [[pack[k] for k in places] for places in dealt]
        deal_orders = [[k + 1 for k in places] for places in dealt]
        leftover, leftover_orders = pack[49:], [50, 51, 52, 53]

        # The dice, thrown now but shown after bets close (PGP-A9c, A11).
        rolls = []
        if rng.random() < 0.01:  # a die not flat: thrown again (PGP-A11c)
            rolls.append((self._dice(), False))
        rolls.append((self._dice(), True))
        total = sum(rolls[-1][0])
        first = group_one_position(total, POSITIONS, DEALER)
        group_at = {(first + g - 1) % POSITIONS: g for g in range(1, POSITIONS + 1)}  # A12a

        late_seat, late_ref = None, ""
        empty = [s for s, p in self.players.items() if p is None]
        if empty and self.chance(Fault.BET_AFTER_CLOSE):
            late_seat = rng.choice(empty)
            late_ref = f"P{rng.getrandbits(40):010x}"
            wagers[late_seat] = self.bet_amount(rng.choice(self.unit_choices), "main")
        playing = {DEALER, *wagers}
        short_group = None
        unbet = [p for p in range(1, POSITIONS) if p not in playing]
        if unbet and self.chance(Fault.LEFTOVER_CARDS):
            # A group nobody plays is dealt one card short, so 5 are left (breaks PGP-A10d only).
            short_group = group_at[rng.choice(unbet)]
            leftover = [groups[short_group].pop(), *leftover]
            leftover_orders = [deal_orders[short_group].pop(), *leftover_orders]
        duplicate = self.chance(Fault.DUPLICATE_CARD)
        if duplicate:
            # A leftover card reads as a copy of a card in play: the deck holds a card twice.
            copied = groups[group_at[rng.choice(sorted(playing))]]
            leftover[-1] = rng.choice(copied)

        for group in range(1, POSITIONS + 1):
            payload = {
                "recipient": "group",
                "seat": None,
                "group": group,
                "cards": _text(groups[group]),
                "face_up": False,
                "deal_order": deal_orders[group],
            }
            faults = self._group_faults(group, serpentine_fault, short_group)
            events.append(new_pending(Pending, ("cards_dealt", self.shoe, payload, faults, None)))
        discard_faults = ((Fault.LEFTOVER_CARDS,) if short_group else ()) + (
            (Fault.DUPLICATE_CARD,) if duplicate else ()
        )
        events.append(
            Pending(
                "cards_dealt",
                self.shoe,
                {
                    "recipient": "discard",
                    "seat": None,
                    "group": None,
                    "cards": _text(leftover),
                    "face_up": False,
                    "deal_order": leftover_orders,
                },
                discard_faults,
            )
        )
        if rng.random() < 0.002:  # a misdeal: the round is void (PGP-A10e, ALL-5)
            events.append(Pending("round_voided", self.console, {"reason": "misdeal"}))
            self.verify_before_next = True
            return pre, events

        events.append(Pending("bets_closed", self.console, {}))
        if late_seat is not None:
            events.append(self._bet(late_seat, wagers[late_seat], late_ref, Fault.BET_AFTER_CLOSE))
        for dice, valid in rolls:
            events.append(
                Pending("dice_rolled", self.console, {"dice": list(dice), "valid": valid})
            )

        way = self.profile.house_way
        seats = []
        for seat in sorted(wagers):
            cards = groups[group_at[seat]]
            hand, surrendered = self._player_setting(cards)  # drawn whatever the archetype
            player = self.players.get(seat)
            if player is not None and player.archetype is not Archetype.TYPICAL:
                # No decision of Pai Gow uses the dealer's cards: every other archetype sets
                # by the house way (PGP-A13), never fouls nor surrenders.
                hand, surrendered = house_way(cards, way), False
            if surrendered:
                events.append(
                    Pending(
                        "player_decided",
                        self.console,
                        {"seat": seat, "decision": "surrender", "amount_cents": 0},
                    )
                )
            elif hand is not None:
                events.append(self._hand_set(seat, hand))
            seats.append(
                PaiGowSeat(
                    seat=seat,
                    wager_cents=wagers[seat],
                    cards=tuple(cards),
                    hand=hand,
                    surrendered=surrendered,
                )
            )
        # A group dealt one card short (leftover_cards) is not a hand anyone could set.
        seen = [p for p in unbet if group_at[p] != short_group]
        if seen and self.chance(Fault.UNBET_GROUP_SEEN):
            seat = rng.choice(seen)
            hand = house_way(groups[group_at[seat]], way)
            events.append(self._hand_set(seat, hand, (Fault.UNBET_GROUP_SEEN,)))
        dealer_cards = groups[group_at[DEALER]]
        dealer_hand = house_way(dealer_cards, way)  # PGP-A13b, A13c: the banker sets last
        dealer_faults: tuple[Fault | tuple[Fault, str], ...] = ()
        if self.chance(Fault.HOUSE_WAY):
            other = self._other_setting(dealer_cards, dealer_hand)
            if other is not None:
                # Staff re-set it by the house way before paying (PGP-A13b), so only the
                # setting breaks a rule; the payouts below are the house way's.
                dealer_hand, dealer_faults = other, (Fault.HOUSE_WAY,)
        events.append(self._hand_set(DEALER, dealer_hand, dealer_faults))

        settled = settle_pai_gow(
            PaiGowRound(round_id=round_id, dealer_cards=tuple(dealer_cards), seats=tuple(seats)),
            self.profile,
        )
        events += self.payout_events(settled.settlements, "main")
        self._payment_order_faults(events)
        events.append(Pending("round_ended", self.console, {}))
        return pre, events

    # ---- pieces -------------------------------------------------------------------------------

    def _pay_chance(self, fault: Fault) -> bool:
        rate = self.rates.get(fault, 0.0)
        return rate > 0.0 and self.pay_rng.random() < rate

    def _payment_order_faults(self, events: list[Pending]) -> None:
        """PGP-A17d faults, in place: the dealer's hand shown after the first payment
        (Fault.PAID_BEFORE_SHOWN), or the lowest seat's winnings paid next to last
        (Fault.PAYMENT_ORDER)."""
        paid = [i for i, e in enumerate(events) if e.event_type == "payout_recorded"]
        if not paid:
            return
        first = paid[0]
        if self._pay_chance(Fault.PAID_BEFORE_SHOWN):
            dealer = [
                i
                for i, e in enumerate(events[:first])
                if e.event_type == "hand_set" and e.payload["seat"] == DEALER
            ]
            if dealer:
                hand = events.pop(dealer[-1])
                first -= 1
                events[first] = events[first]._replace(
                    faults=(*events[first].faults, Fault.PAID_BEFORE_SHOWN)
                )
                events.insert(first + 1, hand)
                return
        # the payments (winnings paid) along the table; collections and pushes are not judged
        paying = [
            i
            for i in paid
            if events[i].payload["paid_cents"] > 0 and events[i].payload["seat"] != DEALER
        ]
        seats = {events[i].payload["seat"] for i in paying}
        if self._pay_chance(Fault.PAYMENT_ORDER) and len(seats) >= 3:
            lowest = min(paying, key=lambda i: events[i].payload["seat"])
            moved = events.pop(lowest)
            moved = moved._replace(faults=(*moved.faults, Fault.PAYMENT_ORDER))
            events.insert(paying[-1], moved)  # just before the last payment

    def _bet(self, seat: int, amount: int, ref: str, fault: Fault | None = None) -> Pending:
        payload = {"seat": seat, "spot": "main", "amount_cents": amount, "player_ref": ref}
        return new_pending(
            Pending, ("bet_placed", self.console, payload, (fault,) if fault else (), seat)
        )

    def _hand_set(
        self, seat: int, hand: HandSet, faults: tuple[Fault | tuple[Fault, str], ...] = ()
    ) -> Pending:
        payload = {"seat": seat, "high": _text(hand.high), "low": _text(hand.low)}
        return new_pending(Pending, ("hand_set", self.console, payload, faults, seat))

    @staticmethod
    def _group_faults(
        group: int, serpentine_fault: bool, short_group: int | None
    ) -> tuple[Fault | tuple[Fault, str], ...]:
        faults: tuple[Fault | tuple[Fault, str], ...] = ()
        if serpentine_fault and group == 1:  # the first group already shows the wrong order
            faults += (Fault.SERPENTINE,)
        if group == short_group:
            faults += (
                (
                    Fault.LEFTOVER_CARDS,
                    FAULTS[Fault.LEFTOVER_CARDS].companion_rule_ids[Game.PAI_GOW],
                ),
            )
        return faults

    def _dice(self) -> tuple[int, int, int]:
        a, b, c = self.rng.choices(range(1, 7), self.die, k=3)
        return a, b, c

    def _player_setting(self, cards: list[int]) -> tuple[HandSet | None, bool]:
        """Players mostly set like the house; some choose another legal setting, a few foul
        (PGP-A15) and fewer surrender (PGP-A16a)."""
        draw = self.rng.random()
        if draw < 0.005:
            return None, True
        if draw < 0.015:
            return self._foul_setting(cards), False
        way_hand = house_way(cards, self.profile.house_way)
        if draw < 0.08:
            return self._other_setting(cards, way_hand) or way_hand, False
        return way_hand, False

    def _other_setting(self, cards: Sequence[int], avoid: HandSet) -> HandSet | None:
        """A legal setting whose low hand differs in ranks from `avoid`'s (tried in random
        order, so usually only a few are checked)."""
        avoid_low = _ranks(avoid.low)
        for low in self.rng.sample(_SPLITS, len(_SPLITS)):
            hand = _split(cards, low)
            if _ranks(hand.low) != avoid_low and not foul_rules(hand):
                return hand
        return None

    def _foul_setting(self, cards: Sequence[int]) -> HandSet:
        if self.rng.random() < 0.5:
            for low in self.rng.sample(_SPLITS, len(_SPLITS)):
                hand = _split(cards, low)
                if foul_rules(hand) == ("PGP-A15a",):
                    return hand
        return HandSet(high=tuple(cards[:4]), low=tuple(cards[4:]))  # 4 high, 3 low: A15b, A15c
