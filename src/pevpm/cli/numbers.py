"""Checked numbers for command-line options.

Each factory returns an argparse ``type=`` callable that accepts only a
finite number in a documented range, so ``--seed -1``, ``--runs 1e30`` or
``--max-time nan`` stop at the command line with one line naming the
option, never deep inside numpy or after minutes of work.

>>> runs = whole(1, MAX_RUNS)
>>> runs("200")
200
>>> runs("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be a whole number from 1 to 1000000, got '0'
>>> positive("nan")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be a finite number > 0, got 'nan'
>>> check_count_list("1..64*2", "-p")
>>> check_count_list("1..99999999999999", "-p")
Traceback (most recent call last):
...
pevpm.errors.PevpmError: -p: process count 99999999999999 is above the limit of 65536
"""

from __future__ import annotations

import argparse
import math
import re

from pevpm.errors import PevpmError

#: Largest process count any command simulates or models.  A rank costs the
#: virtual machine about a kilobyte, and the analytic models are O(p).
MAX_PROCS = 2**16
#: Most Monte Carlo runs per process count.
MAX_RUNS = 10**6
#: Most parallel workers.
MAX_WORKERS = 4096
#: Seeds are whole numbers in 0 .. 2**128 - 1 (numpy's SeedSequence range we use).
MAX_SEED = 2**128 - 1
#: Largest ``--max-events``.
MAX_EVENTS = 10**15


def whole(low: int, high: int, shown_high: str | None = None):
    """A type for a whole number in ``low..high`` (``shown_high``: how messages
    write ``high``)."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be a whole number from {low} to {shown_high or high}, got {text!r}")
        return value
    return convert


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def positive(text: str) -> float:
    """A type for a finite number > 0."""
    value = _finite(text)
    if value is None or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def finite(text: str) -> float:
    """A type for any finite number."""
    value = _finite(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


seed = whole(0, MAX_SEED, "2**128 - 1")
runs = whole(1, MAX_RUNS)
workers = whole(1, MAX_WORKERS)
procs_per_node = whole(1, MAX_PROCS)
max_events = whole(0, MAX_EVENTS)


def finite_result(parse, option: str):
    """``parse`` (text -> number, e.g. ``parse_duration``), refusing a result
    that overflowed to infinity (``1e400us``).

    >>> finite_result(float, "--gap")("1e400")
    Traceback (most recent call last):
    ...
    pevpm.errors.PevpmError: --gap: 1e400 is too large
    """
    def convert(text: str) -> float:
        value = parse(text)
        if not math.isfinite(value):
            raise PevpmError(f"{text} is too large", option)
        return value
    return convert


def check_count_list(text: str, option: str, limit: int = MAX_PROCS) -> None:
    """Refuse a count list (``1,2,4``, ``2..64``, ``1..64*2``) naming a count
    above ``limit`` before anything expands it."""
    for number in re.findall(r"\d+", text):
        if len(number) > 12 or int(number) > limit:
            raise PevpmError(f"process count {number} is above the limit of {limit}", option)
