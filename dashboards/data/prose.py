"""What the pages say in words and how they draw cards, apart from the queries: the reading of
a failed statistical test, a round's event details and its cards."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd


def _odds(p: float) -> str:
    if p < 1e-9:
        return "less than once in a billion times"
    return f"about 1 time in {round(1 / p):,}"


def _soles(cents: float) -> str:
    return f"S/ {cents / 100:,.2f}"


def _deviation(alert: dict[str, Any]) -> str:
    z = float(alert["z_score"])
    side = "above" if z > 0 else "below"
    return f"{abs(z):.2f} standard deviations {side} the expected result (z = {z:.2f})"


def explain(alert: dict[str, Any], *, money: bool) -> str:
    """What a failed statistical test means, in words a floor supervisor can act on; without
    `money`, amounts are told as standard deviations from the expected result."""
    test, subject = str(alert["test_name"]), str(alert["subject_id"])
    p = alert.get("p_value")
    p = None if p is None or (isinstance(p, float) and math.isnan(p)) else float(p)
    chance = f"A fair game gives a result this extreme {_odds(p)}." if p is not None else ""
    when = (
        "over all play recorded"
        if alert.get("gaming_date") is None or pd.isna(alert.get("gaming_date"))
        else f"on {pd.Timestamp(alert['gaming_date']).date()}"
        + ("" if pd.isna(alert.get("shift_no")) else f", shift {int(alert['shift_no'])}")
    )
    if test == "hold_vs_theoretical":
        side = "more" if float(alert["z_score"]) > 0 else "less"  # z: (observed - expected) / sd
        hint = (
            "short pays, commission over-collected or mis-recorded payouts"
            if side == "more"
            else "overpayments, collusion or advantage play"
        )
        if not money:
            return (
                f"{alert['subject_type'].capitalize()} {subject} {when}: the house's result was "
                f"{_deviation(alert)} given the players' cards and decisions, so the house won "
                f"{side} than chance explains. {chance} Check for {hint}."
            )
        return (
            f"{alert['subject_type'].capitalize()} {subject} {when}: the house kept "
            f"{_soles(alert['observed'])} where {_soles(alert['expected'])} was expected given "
            f"the players' cards and decisions; 95 % of fair results fall between "
            f"{_soles(alert['interval_low'])} and "
            f"{_soles(alert['interval_high'])}, so the house won {side} than chance explains "
            f"(z = {alert['z_score']:.2f}). "
            f"{chance} Check for {hint}."
        )
    if test in ("dice_positions", "dice_faces"):
        what = "positions the dice chose" if test == "dice_positions" else "faces of the dice"
        return (
            f"At {subject} the {what} are uneven {when}: chi-square {alert['statistic']:.2f} "
            f"with {alert['degrees_of_freedom']} degrees of freedom over "
            f"{alert['sample_size']:,} observations (PGP-A11b). {chance} Inspect the dice and "
            "the cup, and who uncovers it (PGP-A11a, PGP-A11c)."
        )
    if test in ("card_ranks", "first_card_rank"):
        what = "card ranks" if test == "card_ranks" else "first card of each round"
        return (
            f"The {what} from {alert['subject_type']} {subject} are uneven {when}: chi-square "
            f"{alert['statistic']:.2f} over {alert['sample_size']:,} cards. {chance} Check the "
            "shuffler and the deck for missing, added or marked cards."
        )
    if test == "jackpot_frequency":
        return (
            f"The progressive at {subject} paid {alert['observed']:.0f} times {when} in "
            f"{alert['sample_size']:,} progressive wagers where {alert['expected']:.2f} were "
            f"expected (DEF-THP4). {chance} Check the recorded hits against the cards."
        )
    if test == "dealer_player_pair":
        result = (
            f"{_soles(alert['observed'])} against {_soles(alert['expected'])} expected over "
            f"{alert['sample_size']:,} positions (z = {alert['z_score']:.2f})"
            if money
            else f"{_deviation(alert)} over {alert['sample_size']:,} positions"
        )
        return (
            f"Pair {subject} {when}: the house result was {result} given the player's cards "
            f"and decisions, below the threshold corrected for the number of pairs tested. "
            f"{chance} Review the rounds this dealer ran for this player."
        )
    if test in ("player_decisions", "dealer_player_decisions"):
        under = f" under dealer {subject.split(' x ')[0]}" if " x " in subject else ""
        player = subject.split(" x ")[-1]
        return (
            f"Player {player}{under} {when} took the choice that only knowing the dealer's "
            f"hidden cards makes best in {alert['observed']:.0f} of {alert['sample_size']:,} "
            f"decisions where it was uncertain, against {alert['expected']:.1f} expected of a "
            f"player who cannot see them. {chance} Watch for hole-carding: a dealer exposing "
            "cards, a mirror, a partner; see the Players page."
        )
    threshold = f"{alert['threshold_rule']} {alert['threshold']}"
    return f"{test} on {subject} {when} failed ({threshold}). {chance}"


_ENVELOPE = frozenset(
    {"event_id", "event_type", "schema_version", "casino_id", "table_id", "game", "round_id",
     "seq", "occurred_at", "source_device"}
)  # fmt: skip


def event_details(events: pd.DataFrame) -> pd.DataFrame:
    """The events with their payload reduced to what the envelope columns do not say."""
    details = []
    for payload in events["payload"]:
        body = {k: v for k, v in json.loads(payload).items() if k not in _ENVELOPE}
        details.append(json.dumps(body, ensure_ascii=False, separators=(", ", ": ")))
    shown = events.drop(columns=["payload"])
    shown["details"] = details
    shown["event_id"] = [json.loads(p).get("event_id") for p in events["payload"]]
    return shown


_CARD_EVENTS = ("cards_dealt", "community_dealt", "hand_set", "dealer_revealed")


def cards_of(events: pd.DataFrame) -> pd.DataFrame:
    """Who got which cards, from the card events' payloads, in dealing order."""
    rows = []
    for event in events.to_dict("records"):
        seq, kind = event["seq"], event["event_type"]
        if kind not in _CARD_EVENTS:
            continue
        body = json.loads(event["payload"])
        if kind == "hand_set":
            for hand in ("high", "low"):
                rows.append((seq, kind, f"seat {body.get('seat')} {hand} hand", body.get(hand)))
            continue
        who = body.get("recipient") or body.get("street") or kind
        if body.get("seat") is not None:
            who = f"{who} {body['seat']}"
        elif body.get("group") is not None:
            who = f"{who} {body['group']}"
        elif kind == "community_dealt" and body.get("street"):
            who = f"community ({body['street']})"
        rows.append((seq, kind, str(who), body.get("cards")))
    frame = pd.DataFrame(rows, columns=["seq", "event_type", "to", "cards"])
    frame["cards"] = [pretty_cards(c) for c in frame["cards"]]
    return frame


_SUITS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}


def pretty_cards(cards: Any) -> str:
    """['As', 'Td', 'Jk'] -> 'A♠ 10♦ Joker'."""
    if not isinstance(cards, list):
        return ""
    out = []
    for card in cards:
        text = str(card)
        if text == "Jk":
            out.append("Joker")
        elif len(text) == 2:
            rank = "10" if text[0] == "T" else text[0]
            out.append(rank + _SUITS.get(text[1], text[1]))
        else:
            out.append(text)
    return " ".join(out)
