"""Money arithmetic in integer céntimos: commissions, percentages and paytable pays (DEF-M1).

Every function takes and returns ints; any rounding is an explicit floor, never a float.
"""

from __future__ import annotations

BASIS_POINTS = 10_000  # 100 % in basis points, the unit of every rate in a rule profile


def share_cents(amount_cents: int, rate_bp: int) -> int:
    """`rate_bp` basis points of `amount_cents`, rounded down to the céntimo.

    >>> share_cents(500, 2_000)   # 20 % of a S/ 5 progressive wager (DEF-THP4)
    100
    >>> share_cents(2_000_001, 1_000)   # 10 % of a meter, the odd céntimo stays on the meter
    200000
    """
    if amount_cents < 0 or rate_bp < 0:
        raise ValueError(f"negative amount ({amount_cents}) or rate ({rate_bp})")
    return amount_cents * rate_bp // BASIS_POINTS


def commission_cents(win_cents: int, rate_bp: int, unit_cents: int) -> int:
    """Commission on a win: `rate_bp` of it, rounded down to the commission unit (DEF-M2).

    >>> commission_cents(1_000, 500, 1)     # 5 % of S/ 10.00
    50
    >>> commission_cents(1_010, 500, 1)     # 50.5 céntimos: rounded down
    50
    >>> commission_cents(3_900, 500, 100)   # S/ 1.95 collected in S/ 1 chips
    100
    """
    if unit_cents <= 0:
        raise ValueError(f"commission unit must be positive, got {unit_cents}")
    if win_cents < 0 or rate_bp < 0:
        raise ValueError(f"negative win ({win_cents}) or rate ({rate_bp})")
    # One floor over the exact product, so no intermediate rounding can move the result.
    return win_cents * rate_bp // (BASIS_POINTS * unit_cents) * unit_cents
