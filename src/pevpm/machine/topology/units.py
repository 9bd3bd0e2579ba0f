"""Bandwidths and latencies written as pevpm or SimGrid write them.

pevpm's ``--machine`` units (``10Gbit/s``, ``1.25GB/s``, ``50us``) and
SimGrid's (``125MBps`` bytes/s, ``1Gbps`` bits/s, ``1KiBps``, ``50us``, and
``1Gf`` for speeds), so a number copied from either reads the same.

>>> bandwidth("125MBps"), bandwidth("1Gbps"), bandwidth("10Gbit/s")
(125000000.0, 125000000.0, 1250000000.0)
>>> latency("50us"), latency("0"), speed("1Gf")
(5e-05, 0.0, 1000000000.0)
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")
_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4}
_TIMES = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12,
          "m": 60.0, "h": 3600.0}


def _rate(text: str, what: str, units: dict[str, float]) -> float:
    match = _NUMBER.match(str(text))
    if not match:
        raise ValueError(f"{what} {text!r} is not a number with a unit")
    if match.group(2) not in units:
        raise ValueError(f"{what} {text!r} has an unknown unit (e.g. "
                         f"{', '.join(list(units)[1:6])})")
    # decimal arithmetic, so 50us is exactly the float 50e-6
    value = float(Decimal(match.group(1)) * Decimal(str(units[match.group(2)])))
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} {text!r} must be finite and not negative")
    return value


_BANDWIDTH = {"": 1.0}
for _p, _scale in _PREFIX.items():
    _BANDWIDTH[f"{_p}Bps"] = _scale               # SimGrid: bytes
    _BANDWIDTH[f"{_p}bps"] = _scale / 8           # SimGrid: bits
    _BANDWIDTH[f"{_p}B/s"] = _scale               # pevpm
    _BANDWIDTH[f"{_p}bit/s"] = _scale / 8
_SPEED = {f"{p}f": scale for p, scale in _PREFIX.items()} | {"": 1.0}


def bandwidth(text: str) -> float:
    """Bytes per second, above zero."""
    value = _rate(text, "bandwidth", _BANDWIDTH)
    if value <= 0:
        raise ValueError(f"bandwidth {text!r} must be above zero")
    return value


def latency(text: str) -> float:
    """Seconds."""
    return _rate(text, "latency", _TIMES)


def count(text: str) -> int:
    """A whole number >= 1 (cores, nodes).

    >>> count("16")
    16
    """
    if not str(text).strip().isdigit() or int(text) < 1:
        raise ValueError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def speed(text: str) -> float:
    """Flop/s (SimGrid's ``speed``: ``1Gf``)."""
    return _rate(text, "speed", _SPEED)
