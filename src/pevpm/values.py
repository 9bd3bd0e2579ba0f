"""One conversion for every number a user writes (issue 30, item 2).

A number written in a directive, a ``-D NAME=VALUE``, a calibration file, a
Python model, a DP*Graph file or a ``--coll KEY=VALUE`` goes through
:func:`parse_number` (text) or :func:`checked_number` (a value some other
parser already made: JSON, TOML, YAML, Python), so they all follow the same
rules:

* whole numbers stay exact ``int`` (they are counts, sizes, ranks), but may
  have at most :data:`MAX_DIGITS` digits: a longer one could not take part in
  any computation with a ``float`` (beyond about 1.8e308 it overflows);
* other numbers are ``float`` and must be finite (``inf``, ``nan`` and
  ``1e400`` are refused);
* an error is one :class:`~pevpm.errors.PevpmError` naming the place, and
  shows at most :data:`SHOWN_CHARACTERS` characters of the literal.

>>> parse_number("0x10"), parse_number("2.5e-3"), parse_number("12")
(16, 0.0025, 12)
>>> parse_number("9" * 400, where="m.c:1:10")
Traceback (most recent call last):
...
pevpm.errors.PevpmError: m.c:1:10: value is too large: 99999999999999999999... (400 digits) (whole numbers have at most 300 digits)
"""

from __future__ import annotations

import math
import numbers

from pevpm.errors import PevpmError

#: Most digits of a whole number a user may write (floats end near 1.8e308).
MAX_DIGITS = 300
#: Largest magnitude of a whole number (exclusive): ``10 ** MAX_DIGITS``.
WHOLE_LIMIT = 10 ** MAX_DIGITS
#: Longest literal shown whole in an error message.
SHOWN_CHARACTERS = 20


def shown(text: object, limit: int = SHOWN_CHARACTERS) -> str:
    """``text`` for an error message: whole if at most ``limit`` characters,
    else its start and length (a huge ``int``: only its number of digits).

    >>> shown("12.5"), shown("1" * 50), shown(10 ** 5000)
    ('12.5', '11111111111111111111... (50 digits)', 'a number of about 5001 digits')
    """
    if isinstance(text, int) and abs(text) >= WHOLE_LIMIT:
        return f"a number of about {int(abs(text).bit_length() * math.log10(2)) + 1} digits"
    text = str(text)
    if len(text) <= limit:
        return text
    unit = "digits" if text.lstrip("+-").isdigit() else "characters"
    return f"{text[:limit]}... ({len(text.lstrip('+-'))} {unit})"


def _too_long(text: str, where: str | None, what: str) -> PevpmError:
    return PevpmError(f"{what} is too large: {shown(text)} (whole numbers have at most "
                      f"{MAX_DIGITS} digits)" if text.lstrip("+-").isdigit()
                      else f"{what} is too long: {shown(text)}", where)


def parse_number(text: str, where: str | None = None, what: str = "value") -> int | float:
    """The number written as ``text`` (decimal or ``0x`` whole numbers, decimals,
    exponents): an exact ``int`` or a finite ``float``; anything else is a
    :class:`PevpmError` at ``where`` that calls the value ``what``.

    >>> parse_number("inf", "-D x")
    Traceback (most recent call last):
    ...
    pevpm.errors.PevpmError: -D x: value must be a finite number, got 'inf'
    """
    word = text.strip()
    body = word.lstrip("+-")
    if body[:2].lower() == "0x":
        if len(body) > MAX_DIGITS:
            raise _too_long(word, where, what)
        try:
            return checked_number(int(word, 16), where, what)
        except ValueError:
            raise PevpmError(f"{what} must be a number, got {shown(text)!r}", where) from None
    if body.isdigit():
        if len(body) > MAX_DIGITS:
            raise _too_long(word, where, what)
        return int(word)
    if len(word) > 4 * MAX_DIGITS:
        raise _too_long(word, where, what)
    try:
        value = float(word)
    except ValueError:
        raise PevpmError(f"{what} must be a number, got {shown(text)!r}", where) from None
    if not math.isfinite(value):
        raise PevpmError(f"{what} must be a finite number, got {shown(word)!r}", where)
    return value


def checked_number(value: object, where: str | None = None, what: str = "value") -> int | float:
    """``value`` (from JSON, TOML, YAML or Python) checked by the rules of
    :func:`parse_number`: a whole number of at most :data:`MAX_DIGITS` digits
    (kept exact) or a finite float; ``True``/``False`` and non-numbers refused.

    >>> checked_number(7), checked_number(0.5)
    (7, 0.5)
    >>> checked_number(float("nan"), "c.json: parameters.t", "parameter t")
    Traceback (most recent call last):
    ...
    pevpm.errors.PevpmError: c.json: parameters.t: parameter t is not a finite number: nan
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PevpmError(f"{what} is not a finite number: {shown(repr(value))}", where)
    if isinstance(value, numbers.Integral):
        if abs(int(value)) >= WHOLE_LIMIT:
            raise PevpmError(f"{what} is too large: {shown(int(value))} (whole numbers "
                             f"have at most {MAX_DIGITS} digits)", where)
        return int(value)
    number = float(value)
    if not math.isfinite(number):
        raise PevpmError(f"{what} is not a finite number: {number}", where)
    return number
