"""Players: who decides as if they saw the dealer's hidden cards (stat_player_decisions), the
decisions that say so (fct_decisions), and who plays the legitimate optimum."""

from __future__ import annotations

import pandas as pd

from dashboards.data.core import _frame

_TESTED = """
    SELECT player_ref, game, dealer_id, test_name, is_alert, p_value, threshold, z_score,
           decisions, sample_size AS tested_decisions, observed AS matches,
           expected AS expected_matches, informative_decisions, informative_taken,
           informative_taken_rate, legitimate_agreement_rate, play_class, gain_cents,
           first_day, last_day
    FROM stat_player_decisions
"""


def flagged_players(games: tuple[str, ...] = ()) -> pd.DataFrame:
    """Players (per game) whose matches with the full-information choice are improbable for
    anyone who cannot see the dealer's hidden cards, flagged on their own decisions or under
    one dealer, most improbable first; `dealers` names the dealers of their flagged pairs."""
    return _frame(
        f"""
        WITH tested AS ({_TESTED}),
        flagged AS (
            SELECT DISTINCT player_ref, game FROM tested
            WHERE is_alert AND (len(?::VARCHAR[]) = 0 OR game IN (SELECT UNNEST(?::VARCHAR[])))
        ),
        pairs AS (
            SELECT player_ref, game,
                   string_agg(dealer_id, ', ' ORDER BY p_value) FILTER (WHERE is_alert)
                       AS flagged_with_dealers
            FROM tested WHERE test_name = 'dealer_player_decisions'
            GROUP BY player_ref, game
        )
        SELECT t.* EXCLUDE (dealer_id, test_name), p.flagged_with_dealers
        FROM tested t
        JOIN flagged USING (player_ref, game)
        LEFT JOIN pairs p USING (player_ref, game)
        WHERE t.test_name = 'player_decisions'
        ORDER BY t.p_value, t.player_ref
        """,
        [list(games), list(games)],
    )


def player_dealers(player_ref: str, game: str) -> pd.DataFrame:
    """The player's test under each dealer who dealt to them: where it happened."""
    return _frame(
        f"""
        SELECT * EXCLUDE (player_ref, game, test_name) FROM ({_TESTED})
        WHERE test_name = 'dealer_player_decisions' AND player_ref = ? AND game = ?
        ORDER BY p_value, dealer_id
        """,
        [player_ref, game],
    )


def informative_decisions(player_ref: str, game: str) -> pd.DataFrame:
    """The player's decisions where the legitimate and full-information choices differ: the
    evidence, newest first."""
    return _frame(
        """
        SELECT round_id, settled_at, table_id, dealer_id, played, legitimate, full_information,
               took_full_information, match_probability, gain_cents
        FROM fct_decisions
        WHERE player_ref = ? AND game = ? AND informative
        ORDER BY settled_at DESC, round_id
        """,
        [player_ref, game],
    )


def advantage_players(games: tuple[str, ...] = ()) -> pd.DataFrame:
    """Players who play the legitimate optimum (with an exposed dealer card, the exposed-card
    strategy): legal, and worth knowing."""
    return _frame(
        f"""
        SELECT player_ref, game, decisions, legitimate_agreement_rate, gain_cents, last_day
        FROM ({_TESTED})
        WHERE test_name = 'player_decisions' AND play_class = 'plays the legitimate optimum'
          AND (len(?::VARCHAR[]) = 0 OR game IN (SELECT UNNEST(?::VARCHAR[])))
        ORDER BY decisions DESC, player_ref
        """,
        [list(games), list(games)],
    )
