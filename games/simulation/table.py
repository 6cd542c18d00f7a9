"""What every simulated table does whatever its game: open, seat players, rotate dealers, count
chips, fill and credit the tray, shuffle and cut, play rounds at the game's pace, and close.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from events import Game
from events.models import Spot
from games.simulation.faults import FAULTS, Fault, FaultRecord
from games.simulation.players import (
    SEES_HIDDEN,
    Archetype,
    PlayerMix,
    PlayerRecord,
    flashing_dealer,
)
from games.simulation.stream import Message, Pending, TableStream, new_pending
from rules.cards import card_str
from rules.settlement import Outcome, Settlement

CARD_TEXT = tuple(card_str(c) for c in range(53))
DENOMINATIONS = (50_000, 10_000, 2_500, 500, 100, 50, 10, 1)  # chips and coins, céntimos
MINUTE_MS = 60_000
_PAYMENT_FAULTS = (Fault.OVERPAYMENT, Fault.UNDERPAYMENT, Fault.COMMISSION_NOT_TAKEN)
_SPOT_TEXT = {spot: spot.value for spot in Spot}


@dataclass(kw_only=True)
class Player:
    ref: str
    unit_cents: int  # the player's usual bet
    archetype: Archetype = Archetype.TYPICAL
    sees: float = 0.0  # hole-carder: probability of seeing the dealer's hidden cards a round


def chips_of(amount_cents: int) -> list[dict[str, int]]:
    """A tray holding `amount_cents`, by denomination (largest chips first)."""
    if amount_cents < 0:
        raise ValueError(f"a chip tray cannot hold {amount_cents} céntimos")
    chips = []
    for denomination in DENOMINATIONS:
        count, amount_cents = divmod(amount_cents, denomination)
        chips.append({"denomination_cents": denomination, "count": count})
    return chips


def recorded_payout(line: Settlement) -> tuple[int, int, int]:
    """(collected, paid, commission) a dealer who follows the rules records for one line."""
    if line.outcome is Outcome.WIN:
        return 0, line.payout_cents, line.commission_cents
    return max(0, -line.net_cents), 0, 0


class TableSim:
    """One table for the length of the run. Subclasses define the game's decks and rounds."""

    game: ClassVar[Game]
    code: ClassVar[str]
    seats: ClassVar[int]
    rounds_per_hour: ClassVar[int]
    unit_choices: ClassVar[tuple[int, ...]]  # usual bets players bring, céntimos
    profile_name: ClassVar[str]  # the released profile its tables open with by default
    opening_inventory_cents: ClassVar[int] = 10_000_000

    def __init__(
        self,
        *,
        number: int,
        casino_id: str,
        seed: int,
        rates: Mapping[Fault, float],
        on_fault: Callable[[FaultRecord], None] | None,
        start_ms: int,
        end_ms: int,
        profile: str | None = None,
        players: PlayerMix | None = None,
        on_player: Callable[[PlayerRecord], None] | None = None,
    ) -> None:
        self.table_id = f"{self.code}-{number:02d}"
        # the released profile the table opens with: NAME or NAME@VERSION (default: the game's)
        self.profile_ref = profile or self.profile_name
        self.rng = random.Random(f"{seed}/{self.table_id}")
        self.np_rng = np.random.default_rng(self.rng.getrandbits(64))
        self.rates = rates
        self.payment_faults_on = any(rates.get(fault, 0.0) > 0.0 for fault in _PAYMENT_FAULTS)
        self.stream = TableStream(
            casino_id=casino_id,
            table_id=self.table_id,
            game=self.game,
            rng=random.Random(self.rng.getrandbits(64)),
            rates=rates,
            on_fault=on_fault,
        )
        self.clock_ms = start_ms
        self.end_ms = end_ms
        self.round_no = 0
        self.round_ms = 3_600_000 // self.rounds_per_hour
        self.console = f"{self.table_id}/console"
        self.shoe = f"{self.table_id}/shoe"
        self.shuffler = f"{self.table_id}/shuffler"
        self.players: dict[int, Player | None] = dict.fromkeys(range(1, self.seats + 1))
        self.tray_cents = self.opening_inventory_cents
        self.drop_cents = 0
        self.dealer_no = 0
        self.dealer_id = ""
        self.next_dealer_change_ms = 0
        self.deck_no = 0
        self.decks: list[str] = []
        # The deck-inspection faults draw from their own generator, so turning them on changes
        # no other draw; a deck put into play uninspected -> the fault, logged at its first round.
        self.prep_rng = random.Random(f"{seed}/{self.table_id}/deck_prep")
        self.uninspected: dict[str, Fault] = {}
        # Player archetypes (`--players`) draw from their own generator too: without a mix none
        # is drawn, and with one no other draw of the night changes.
        self.player_mix = players
        self.on_player = on_player
        self.player_rng = random.Random(f"{seed}/{self.table_id}/players")
        self.sight_rng = random.Random(f"{seed}/{self.table_id}/hole_card_sight")
        # Which bets win follows the players' decisions; with archetypes that decide otherwise
        # the payment faults draw from a generator of their own, so a decision changed changes
        # no later draw (bets, players coming and going) of the table's main generator.
        deciding = players is not None and any(
            s.archetype is not Archetype.TYPICAL and s.share > 0 for s in players.shares
        )
        self.payment_rng = (
            random.Random(f"{seed}/{self.table_id}/payments") if deciding else self.rng
        )
        self.flashing_dealer = (
            flashing_dealer(seed, self.table_id)
            if players is not None and players.has_flash_partners
            else None
        )

    # ---- helpers ------------------------------------------------------------------------------

    def chance(self, fault: Fault) -> bool:
        rate = self.rates.get(fault, 0.0)
        return rate > 0.0 and self.rng.random() < rate

    def emit(self, batch: list[Pending], round_id: str | None, duration_ms: int) -> list[Message]:
        step = max(1, duration_ms // (len(batch) + 1))
        messages = self.stream.emit(batch, round_id=round_id, start_ms=self.clock_ms, step_ms=step)
        self.clock_ms += max(duration_ms, step * len(batch))
        return messages

    def prep_chance(self, fault: Fault) -> bool:
        """`chance` for the deck-inspection faults, from their own generator."""
        rate = self.rates.get(fault, 0.0)
        return rate > 0.0 and self.game in FAULTS[fault].rule_ids and self.prep_rng.random() < rate

    def new_deck(
        self,
        *,
        jokers_in_box: int,
        jokers_kept: int,
        count: int,
        uninspected: Fault | None = None,
    ) -> list[Pending]:
        """A new deck opened, its extra jokers destroyed, inspected, counted and washed
        (PGP-A6, PGP-A7, TCP-A5, TCP-A6, THP-A5, THP-A6, ALL-3). `uninspected`: the fault that
        leaves the inspection out (else Fault.UNINSPECTED_DECK may be drawn)."""
        if uninspected is None and self.prep_chance(Fault.UNINSPECTED_DECK):
            uninspected = Fault.UNINSPECTED_DECK
        self.deck_no += 1
        deck_id = f"{self.table_id}-D{self.deck_no}"
        self.decks.append(deck_id)
        colour = ("red", "blue")[(self.deck_no - 1) % 2]
        events = [
            Pending(
                "deck_opened",
                self.console,
                {"deck_id": deck_id, "back_colour": colour, "jokers_in_box": jokers_in_box},
            )
        ]
        if jokers_in_box > jokers_kept:
            events.append(
                Pending(
                    "joker_destroyed",
                    self.console,
                    {"deck_id": deck_id, "count": jokers_in_box - jokers_kept},
                )
            )
        if uninspected is None:
            events.append(Pending("deck_inspected", self.console, {"deck_id": deck_id}))
        else:
            self.uninspected[deck_id] = uninspected
        # A deck changed by the fault is counted right: its count draws no fault, so turning
        # the fault on changes no other draw of the night.
        events += self.verify(
            deck_id, count, count_fault=uninspected is not Fault.DECK_CHANGE_UNINSPECTED
        )
        return events

    def change_deck(self, *, jokers_in_box: int, jokers_kept: int, count: int) -> list[Pending]:
        """Fault.DECK_CHANGE_UNINSPECTED: the deck in play retired for a faulty card (PGP-A6c)
        and a new one put into play counted and washed, but not inspected (PGP-A6b)."""
        old = self.decks.pop()
        retired = Pending("deck_retired", self.console, {"deck_id": old, "reason": "faulty card"})
        new = self.new_deck(
            jokers_in_box=jokers_in_box,
            jokers_kept=jokers_kept,
            count=count,
            uninspected=Fault.DECK_CHANGE_UNINSPECTED,
        )
        return [retired, *new]

    def first_round_faults(self, round_events: list[Pending]) -> None:
        """Log an uninspected deck's fault on its first round's round_started."""
        if not self.uninspected or not round_events:
            return
        start = round_events[0]
        fault = self.uninspected.pop(start.payload.get("deck_id", ""), None)
        if start.event_type == "round_started" and fault is not None:
            round_events[0] = start._replace(faults=(*start.faults, fault))

    def verify(self, deck_id: str, count: int, *, count_fault: bool = True) -> list[Pending]:
        """Count and wash the deck (PGP-A7a, A7b); a deck_count fault reports one card short
        (never drawn with `count_fault=False`)."""
        faults: tuple[Fault, ...] = ()
        if count_fault and self.chance(Fault.DECK_COUNT):
            faults, count = (Fault.DECK_COUNT,), count - 1
        return [
            Pending("deck_counted", self.console, {"deck_id": deck_id, "count": count}, faults),
            Pending("deck_washed", self.console, {"deck_id": deck_id}),
        ]

    def shuffle_and_cut(self, deck_id: str) -> tuple[list[Pending], bool]:
        """Shuffle, then cut (PGP-A8, TCP-A7, ALL-4); True when the cut was left out (a fault)."""
        events = [
            Pending(
                "shuffle_completed",
                self.shuffler,
                {"deck_id": deck_id, "method": "machine", "device": self.shuffler},
            )
        ]
        if self.chance(Fault.MISSING_CUT):
            return events, True
        seated = [s for s, p in self.players.items() if p is not None]
        by_player = seated and self.rng.random() < 0.7
        events.append(
            Pending(
                "cut_completed",
                self.console,
                {
                    "deck_id": deck_id,
                    "by": "player" if by_player else "dealer",
                    "seat": self.rng.choice(seated) if by_player else None,
                    "depth": self.rng.randint(3, 9),  # PGP-A8b: fewer than 10 from the base
                },
            )
        )
        return events, False

    def bet_amount(self, unit: int, spot: str) -> int:
        low, high = self.limits[spot]
        return max(low, min(high, unit * 2 if self.rng.random() < 0.25 else unit))

    def payout_events(
        self,
        lines: tuple[Settlement, ...],
        payment_spot: str,
        *,
        payment_faults: bool = True,
    ) -> list[Pending]:
        """payout_recorded per settled line; each payment fault drawn goes to a different winning
        bet on `payment_spot`. The chip tray follows what was actually paid. No payment fault
        where the events cannot be settled (`payment_faults=False`): it could not be checked."""
        faulty: dict[int, Fault] = {}
        pay = self.payment_rng
        if payment_faults and self.payment_faults_on:
            wins = [
                i
                for i, ln in enumerate(lines)
                if ln.outcome is Outcome.WIN and ln.payout_cents and ln.spot == payment_spot
            ]
            for fault in _PAYMENT_FAULTS:
                if wins and self.rates.get(fault, 0.0) > 0.0 and pay.random() < self.rates[fault]:
                    if fault is Fault.COMMISSION_NOT_TAKEN:
                        candidates = [i for i in wins if lines[i].commission_cents > 0]
                    else:
                        candidates = [i for i in wins if lines[i].payout_cents > 1]
                    candidates = [i for i in candidates if i not in faulty]
                    if candidates:
                        faulty[pay.choice(candidates)] = fault
        events = []
        console = self.console
        for index, line in enumerate(lines):
            collected, paid, commission = recorded_payout(line)
            mistake = faulty.get(index)
            if mistake is Fault.OVERPAYMENT:
                paid += max(1, paid // 2)
            elif mistake is Fault.UNDERPAYMENT:
                paid -= max(1, paid // 2)
            elif mistake is Fault.COMMISSION_NOT_TAKEN:
                commission = 0
            self.tray_cents += collected + commission - paid
            seat = line.seat
            payload = {
                "seat": seat,
                "spot": _SPOT_TEXT[line.spot],  # JSON writes an enum through a slow property
                "collected_cents": collected,
                "paid_cents": paid,
                "commission_cents": commission,
            }
            faults = (mistake,) if mistake else ()
            events.append(new_pending(Pending, ("payout_recorded", console, payload, faults, seat)))
        return events

    # ---- the table's life ---------------------------------------------------------------------

    limits: dict[str, tuple[int, int]]

    def header(self) -> Pending:
        """The table_opened event."""
        raise NotImplementedError

    def open_decks(self) -> list[Pending]:
        """Everything after opening and before the first round: decks, meter."""
        raise NotImplementedError

    def play_round(self, round_id: str) -> tuple[list[Pending], list[Pending]]:
        """(table-level events before the round, the round's events)."""
        raise NotImplementedError

    def after_dealer_change(self) -> list[Pending]:
        return []

    def table_opened(self, profile: Any, payout_cap: int | None, unit: int | None) -> Pending:
        return Pending(
            "table_opened",
            self.console,
            {
                "profile": profile.name,
                "profile_version": profile.version,
                "seats": self.seats,
                "limits": [
                    {"spot": spot, "min_cents": low, "max_cents": high}
                    for spot, (low, high) in self.limits.items()
                ],
                "payout_cap_cents": payout_cap,
                "commission_unit_cents": unit,
            },
        )

    def change_dealer(self) -> Pending:
        self.dealer_no += 1
        self.dealer_id = f"{self.table_id}-dealer-{(self.dealer_no - 1) % 4 + 1}"
        self.next_dealer_change_ms = self.clock_ms + self.rng.randint(50, 70) * MINUTE_MS
        return Pending("dealer_changed", self.console, {"dealer_id": self.dealer_id})

    def seat_players(self) -> None:
        """Players come and go between rounds; someone is always playing, so the table is never
        idle (an idle table would need its deck verified again, PGP-A7c)."""
        for seat, player in self.players.items():
            if player is not None and self.rng.random() < 0.025:
                self.players[seat] = None
            elif player is None and self.rng.random() < 0.04:
                self.players[seat] = self.sit(seat, self.arrive())
        if all(p is None for p in self.players.values()):
            player = self.arrive()  # before the seat is drawn, as it always was
            seat = self.rng.randint(1, self.seats)
            self.players[seat] = self.sit(seat, player)

    def arrive(self) -> Player:
        unit = self.rng.choice(self.unit_choices)
        buy_in = unit * self.rng.choice((10, 20, 40))
        self.drop_cents += buy_in  # cash into the drop box, chips out of the tray
        self.tray_cents -= buy_in
        return Player(ref=f"P{self.rng.getrandbits(40):010x}", unit_cents=unit)

    # ---- player archetypes (`--players`) ------------------------------------------------------

    def sit(self, seat: int, player: Player) -> Player:
        """The player's archetype, drawn from the mix (none drawn without one), logged."""
        if self.player_mix is None:
            return player
        share = self.player_mix.draw(self.player_rng)
        if share is not None:
            player.archetype, player.sees = share.archetype, share.sees
        fields: dict[str, Any] = {
            "player_ref": player.ref,
            "archetype": player.archetype.value,
            "seat": seat,
            "first_round_id": f"{self.table_id}-R{self.round_no + 1:05d}",
            "unit_cents": player.unit_cents,
        }
        if player.archetype is Archetype.HOLE_CARDER:
            fields["sees_hidden_probability"] = player.sees
        elif player.archetype is Archetype.FLASH_PARTNER:
            fields["flashing_dealer"] = self.flashing_dealer
        self.note("player", fields)
        return player

    def note(self, kind: str, fields: dict[str, Any]) -> None:
        if self.on_player is not None:
            self.on_player(
                PlayerRecord(kind=kind, game=self.game, table_id=self.table_id, fields=fields)
            )

    def sees_hidden(self, player: Player) -> bool:
        """Whether the player sees the dealer's hidden cards this round (a draw of a generator
        of its own for a hole-carder with 0 < P < 1, so P changes no archetype drawn)."""
        if player.archetype not in SEES_HIDDEN:
            return False
        if player.archetype is Archetype.FLASH_PARTNER:
            return self.dealer_id == self.flashing_dealer
        if player.sees >= 1.0:
            return True
        return player.sees > 0.0 and self.sight_rng.random() < player.sees

    def note_hidden(
        self, round_id: str, seat: int, player: Player, decision: str, legitimate: str
    ) -> None:
        """Log a decision taken with the dealer's hidden cards in view."""
        self.note(
            "hidden_knowledge",
            {
                "round_id": round_id,
                "seat": seat,
                "player_ref": player.ref,
                "archetype": player.archetype.value,
                "saw_hidden": True,
                "dealer_id": self.dealer_id,
                "decision": decision,
                "legitimate_decision": legitimate,
            },
        )

    def tray_moves(self) -> list[Pending]:
        """Fill a low tray, credit a full one (inputs of DEF-ACC1)."""
        low, high = self.opening_inventory_cents // 2, self.opening_inventory_cents * 2
        if self.tray_cents < low:
            amount = self.opening_inventory_cents - self.tray_cents
            amount += -amount % 100_000  # fills come in whole S/ 1,000
            self.tray_cents += amount
            return [Pending("fill_recorded", self.console, {"amount_cents": amount})]
        if self.tray_cents > high:
            amount = (self.tray_cents - self.opening_inventory_cents) // 100_000 * 100_000
            self.tray_cents -= amount
            return [Pending("credit_recorded", self.console, {"amount_cents": amount})]
        return []

    def batches(self) -> Iterator[list[Message]]:
        """The table's messages, one batch per round (table-level events before it included)."""
        opening = [
            self.header(),
            self.change_dealer(),
            Pending(
                "inventory_counted",
                self.console,
                {"kind": "opening", "chips": chips_of(self.tray_cents)},
            ),
            *self.open_decks(),
        ]
        if self.flashing_dealer is not None:
            self.note("flashing_dealer", {"dealer_id": self.flashing_dealer})
        yield self.emit(opening, None, 2 * MINUTE_MS)
        while self.clock_ms < self.end_ms:
            before: list[Pending] = []
            if self.clock_ms >= self.next_dealer_change_ms:
                before += [self.change_dealer(), *self.after_dealer_change()]
            self.seat_players()
            before += self.tray_moves()
            self.round_no += 1
            round_id = f"{self.table_id}-R{self.round_no:05d}"
            pre_round, round_events = self.play_round(round_id)
            self.first_round_faults(round_events)
            # The game's pace is rounds per hour, the table-level events before it included.
            messages = self.emit(before + pre_round, None, self.round_ms // 6)
            messages += self.emit(round_events, round_id, self.round_ms - self.round_ms // 6)
            yield messages
        closing = [
            *(
                Pending("deck_retired", self.console, {"deck_id": d, "reason": "end of day"})
                for d in self.decks
            ),
            Pending(
                "inventory_counted",
                self.console,
                {"kind": "closing", "chips": chips_of(self.tray_cents)},
            ),
            Pending("drop_recorded", self.console, {"amount_cents": self.drop_cents}),
            Pending("table_closed", self.console, {}),
        ]
        yield self.emit(closing, None, 5 * MINUTE_MS)
