"""Tripóker's play/fold strategies, by the profile: what a player who plays well decides, for
re-deciding recorded rounds (`croupier what-if --decisions strategy`, `GameSpec.redecide`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from events.models import Decision, PlayerDecided, Spot
from games.base import Decider, RoundEvents, dealt, stakes
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import plays_queen_six_four, qualifier_strength
from rules.profile import Profile
from rules.rankings import TRIPOKER
from rules.settlement import category_table


def redecide(profile: Profile) -> Decider:
    """Each ante player's play/fold decided again by `profile`'s strategy (`strategy`); the
    round's other events as played. Returns the round and how many decisions changed."""
    if not isinstance(profile, TripokerProfile):
        raise ValueError(f"{profile.name} is not a Tripóker profile")
    if len(profile.exposed_dealer_cards) > 1:
        raise ValueError(f"{profile.name}: the strategy handles one exposed dealer card")
    plays = strategy(profile)

    def decide(kinds: RoundEvents) -> tuple[RoundEvents, int]:
        hands, dealer = dealt(kinds)
        by_spot = stakes(kinds, (Spot.ANTE, Spot.PAIR_PLUS))
        antes, pair_plus = by_spot[Spot.ANTE], by_spot[Spot.PAIR_PLUS]
        changed = 0
        events = []
        for event in kinds.all:
            if isinstance(event, PlayerDecided) and event.seat in hands and event.seat in antes:
                play = plays(
                    hands[event.seat], dealer, antes[event.seat], pair_plus.get(event.seat, 0)
                )
                decision = Decision.PLAY if play else Decision.FOLD
                if decision is not event.decision:
                    changed += 1
                    amount = antes[event.seat] * profile.play_multiple if play else 0
                    event = event.model_copy(update={"decision": decision, "amount_cents": amount})
            events.append(event)
        return (RoundEvents(events), changed) if changed else (kinds, 0)

    return decide


def strategy(profile: TripokerProfile) -> Callable[[Sequence[int], Sequence[int], int, int], bool]:
    """Play or fold (hand, dealer's cards, ante, pair plus -> play?), by the profile: queen-6-4
    or better when every dealer card is face down; with one exposed dealer card (TCP-A10b),
    play when the expected return of playing (ante, play, ante bonus, and pair plus when a fold
    forfeits it, TCP-A11b) beats folding, exactly, over the 1,128 dealer hands left."""
    if not profile.exposed_dealer_cards:
        return lambda hand, dealer, ante, pair_plus: plays_queen_six_four(hand)
    position = profile.exposed_dealer_cards[0] - 1
    qualifier = qualifier_strength(profile.dealer_qualifier)
    categories = category_table(TRIPOKER)
    multiple = profile.play_multiple
    strength = TRIPOKER.strength

    def plays(hand: Sequence[int], dealer: Sequence[int], ante: int, pair_plus: int) -> bool:
        exposed = dealer[position]
        mine = strength(hand)
        category = categories[mine]
        bonus = profile.ante_bonus.get(category) or 0
        seen = {*hand, exposed}
        rest = [c for c in range(52) if c not in seen]
        gain = 0  # play's return in antes, summed over the dealer hands
        hands = 0
        for a, b in itertools.combinations(rest, 2):
            d = strength((exposed, a, b))
            hands += 1
            if d < qualifier:
                gain += 1
            elif mine > d:
                gain += 1 + multiple
            elif mine < d:
                gain -= 1 + multiple
        play = ante * (bonus * hands + gain)
        fold = -ante * hands
        if pair_plus and profile.fold_forfeits_pair_plus:
            pays = profile.pair_plus.get(category)
            if pays is not None:  # a fold loses the stake instead of winning pays × stake
                play += pair_plus * (pays + 1) * hands
        return play > fold

    return plays
