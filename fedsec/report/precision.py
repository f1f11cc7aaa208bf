"""The precision at which a report prints, and therefore compares, its numbers.

Every set or ranking a report forms (Pareto sets, ties, the worst leak, what stops an attack,
the level of leakage in words) compares values as printed: an advantage to
:data:`ADVANTAGE_DECIMALS` decimals, any other metric (accuracy, an error) to
:data:`SIGNIFICANT_DIGITS` significant digits. Two results that print the same are the same
to the report: 0.99999999993 and 0.99999999996 are both 1.00, and neither beats the other.
"""

from __future__ import annotations

import math

#: Decimals of an advantage in every sentence and table of a report.
ADVANTAGE_DECIMALS = 2
#: Significant digits of any other metric (accuracy, an error) in a report.
SIGNIFICANT_DIGITS = 3


def printed_advantage(value: float) -> float:
    """An advantage as the report prints it (``-0.0`` reads as ``0.0``).

    Examples
    --------
    >>> printed_advantage(0.99999999993) == printed_advantage(0.99999999996) == 1.0
    True
    >>> printed_advantage(0.894), printed_advantage(-0.001)
    (0.89, 0.0)
    """
    return round(float(value), ADVANTAGE_DECIMALS) + 0.0


def printed_metric(value: float) -> float:
    """Any other metric as the report prints it: :data:`SIGNIFICANT_DIGITS` significant
    digits (non-finite values unchanged).

    Examples
    --------
    >>> printed_metric(0.92105), printed_metric(0.0012345), printed_metric(7.6e-8 + 0.5)
    (0.921, 0.00123, 0.5)
    """
    value = float(value)
    if not math.isfinite(value):
        return value
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}") + 0.0


def show_advantage(value: float, signed: bool = False) -> str:
    """An advantage (or a difference of accuracies, with ``signed``) in words' digits.

    Examples
    --------
    >>> show_advantage(0.99999999993), show_advantage(-0.004, signed=True)
    ('1.00', '+0.00')
    """
    shown = printed_advantage(value)
    return f"{shown:+.{ADVANTAGE_DECIMALS}f}" if signed else f"{shown:.{ADVANTAGE_DECIMALS}f}"
