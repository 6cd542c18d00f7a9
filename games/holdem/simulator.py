"""A simulated Progressive Texas Hold'em table (`holdem/pe-2007`, THP-A2..A6, DEF-THP1..6).

Two decks used alternately, hole cards, flop, call or fold, turn and river, the progressive meter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from events import Game
from events.models import Decision
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from games.holdem.strategy import full_information_calls, legitimate_calls
from games.simulation.faults import Fault
from games.simulation.players import Archetype
from games.simulation.stream import Pending, new_pending
from games.simulation.table import CARD_TEXT, Player, TableSim
from rules.rankings import HOLDEM, Category
from rules.settlement import category_table, strengths_with

QUEEN = 10  # rank index of the queen (2 = 0 .. A = 12)
_CATEGORY = category_table(HOLDEM)


_DECISION = {True: "call", False: "fold"}


class HoldemTable(TableSim):
    game = Game.HOLDEM
    code = "TH"
    seats = 7  # THP-A2a: seven ante boxes
    rounds_per_hour = 45
    unit_choices = (1_000, 2_000, 5_000, 10_000, 20_000)
    profile_name = "holdem/pe-2007"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        profile = HoldemProfile.load(self.profile_ref)
        self.profile = profile
        wager = profile.progressive.wager_cents
        self.limits = {"ante": (1_000, 100_000), "progressive": (wager, wager)}
        self.meter_cents = profile.progressive.seed_cents
        self.last_deck: str | None = None

    def header(self) -> Pending:
        return self.table_opened(self.profile, self.profile.payout_cap_cents, None)

    def open_decks(self) -> list[Pending]:
        events: list[Pending] = []
        for _ in range(self.profile.decks):  # THP-A2d: two decks, different backs
            events += self.new_deck(jokers_in_box=2, jokers_kept=0, count=52)  # THP-A5, A6
        events.append(
            Pending(
                "progressive_meter_reset",
                self.console,
                {"meter_cents": self.meter_cents, "reason": "opening"},
            )
        )
        return events

    def play_round(self, round_id: str) -> tuple[list[Pending], list[Pending]]:
        rng = self.rng
        # THP-A2d, DEF-THP6: the decks alternate; the fault deals from last round's deck again.
        deck_id = self.decks[0] if self.last_deck != self.decks[0] else self.decks[1]
        same_deck = self.last_deck is not None and self.chance(Fault.SAME_DECK)
        if same_deck and self.last_deck is not None:
            deck_id = self.last_deck
        self.last_deck = deck_id
        pre, cut_missing = self.shuffle_and_cut(deck_id)
        round_faults = ((Fault.MISSING_CUT,) if cut_missing else ()) + (
            (Fault.SAME_DECK,) if same_deck else ()
        )
        events = [
            Pending(
                "round_started",
                self.console,
                {"deck_id": deck_id, "dealer_id": self.dealer_id, "banker_position": None},
                round_faults,
            )
        ]
        antes: dict[int, int] = {}
        progressive: dict[int, int] = {}
        wager = self.profile.progressive.wager_cents
        for seat, player in self.players.items():
            if player is None:
                continue
            antes[seat] = self.bet_amount(player.unit_cents, "ante")
            events.append(self._bet(seat, "ante", antes[seat], player.ref))
            if rng.random() < 0.5:  # DEF-THP4: placed with the ante
                progressive[seat] = wager
                events.append(self._bet(seat, "progressive", wager, player.ref))
        events.append(Pending("bets_closed", self.console, {}))

        # DEF-THP1: two hole cards each, two rounds, the dealer last; then the flop.
        seats = sorted(antes)
        n = len(seats) + 1
        pack = self.np_rng.permutation(52).tolist()
        holes = {seat: (pack[i], pack[n + i]) for i, seat in enumerate(seats)}
        dealer = (pack[n - 1], pack[2 * n - 1])
        flop, turn, river = pack[2 * n : 2 * n + 3], pack[2 * n + 3], pack[2 * n + 4]
        for i, seat in enumerate(seats):
            events.append(self._dealt("seat", seat, holes[seat], [i + 1, n + i + 1]))
        events.append(self._dealt("dealer", None, dealer, [n, 2 * n]))
        if self.chance(Fault.DUPLICATE_CARD):
            # A burn card (optional, DEF-THP1) that reads as a copy of a hole card.
            copy = holes[rng.choice(seats)][rng.randrange(2)]
            burn = self._dealt("burn", None, (copy,), [2 * n + 1], (Fault.DUPLICATE_CARD,))
            events.append(burn)
        events.append(self._community("flop", flop))

        decisions: dict[int, Decision] = {}
        made = strengths_with(HOLDEM, flop, [holes[seat] for seat in seats])
        for seat, strength in zip(seats, made, strict=True):
            calls = _CATEGORY[strength] >= Category.PAIR or max(holes[seat]) >> 2 >= QUEEN
            if rng.random() < 0.03:  # drawn for every player, whatever the archetype
                calls = not calls
            player = self.players[seat]
            if player is not None and player.archetype is not Archetype.TYPICAL:
                calls = self._archetype_calls(
                    round_id, seat, player, holes[seat], flop, dealer, antes[seat]
                )
            decisions[seat] = Decision.CALL if calls else Decision.FOLD
            payload = {
                "seat": seat,
                "decision": "call" if calls else "fold",
                "amount_cents": antes[seat] * self.profile.call_multiple if calls else 0,
            }
            events.append(new_pending(Pending, ("player_decided", self.console, payload, (), seat)))
        called = Decision.CALL in decisions.values()
        if called:  # with every seat folded the hand is over at the flop
            events.append(self._community("turn", [turn]))
            events.append(self._community("river", [river]))
            events.append(
                Pending("dealer_revealed", self.shoe, {"cards": [CARD_TEXT[c] for c in dealer]})
            )
        settled = settle_holdem(
            HoldemRound(
                round_id=round_id,
                dealer_hole=dealer if called else (),
                board=(*flop, turn, river) if called else tuple(flop),
                seats=tuple(
                    HoldemSeat(
                        seat=seat,
                        ante_cents=antes[seat],
                        progressive_cents=progressive.get(seat, 0),
                        hole=holes[seat],
                        decision=decisions[seat],
                    )
                    for seat in seats
                ),
                meter_cents=self.meter_cents,
            ),
            self.profile,
        )
        events += self.payout_events(settled.settlements, "ante")
        if settled.meter_after_cents is not None:
            self.meter_cents = settled.meter_after_cents
        events.append(
            Pending("progressive_meter_recorded", self.console, {"meter_cents": self.meter_cents})
        )
        events.append(Pending("round_ended", self.console, {}))
        return pre, events

    def _archetype_calls(
        self,
        round_id: str,
        seat: int,
        player: Player,
        hole: Sequence[int],
        flop: Sequence[int],
        dealer: Sequence[int],
        ante: int,
    ) -> bool:
        """Call or fold by the player's archetype (`games.simulation.players`): the legitimate
        strategy, exact over what the player may see (no dealer card is exposed in Hold'em:
        exposed-optimal is basic), or, for a hole-carder who sees the dealer's hole cards, the
        full-information best, exact over the turn and river (logged)."""
        legitimate = legitimate_calls(self.profile, hole, flop, ante)
        if not self.sees_hidden(player):
            return legitimate
        calls = full_information_calls(self.profile, hole, flop, dealer, ante)
        self.note_hidden(round_id, seat, player, _DECISION[calls], _DECISION[legitimate])
        return calls

    def _bet(self, seat: int, spot: str, amount: int, ref: str) -> Pending:
        payload = {"seat": seat, "spot": spot, "amount_cents": amount, "player_ref": ref}
        return new_pending(Pending, ("bet_placed", self.console, payload, (), seat))

    def _dealt(
        self,
        recipient: str,
        seat: int | None,
        cards: tuple[int, ...],
        order: list[int],
        faults: tuple[Fault, ...] = (),
    ) -> Pending:
        payload = {
            "recipient": recipient,
            "seat": seat,
            "group": None,
            "cards": [CARD_TEXT[c] for c in cards],
            "face_up": False,
            "deal_order": order,
        }
        return new_pending(Pending, ("cards_dealt", self.shoe, payload, faults, seat))

    def _community(self, street: str, cards: list[int]) -> Pending:
        return Pending(
            "community_dealt", self.shoe, {"street": street, "cards": [CARD_TEXT[c] for c in cards]}
        )
