"""Reading analytic-model inputs: parameter files (TOML or YAML), number lists, CSV tables.

>>> parse_counts("1..8*2"), parse_counts("3,5..7")
([1, 2, 4, 8], [3, 5, 6, 7])
"""

from __future__ import annotations

import csv
import io
import tomllib
from pathlib import Path

import yaml

from pevpm.errors import AnalyticError, PevpmError
from pevpm.files import read_text
from pevpm.values import parse_number


def load_mapping(path: str | Path) -> dict:
    """A TOML (``.toml``) or YAML (``.yaml``/``.yml``) file as a dict.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "qcrd.toml")
    ...     _ = open(path, "w").write("s_par = 0.71\\nw = 0.19\\n")
    ...     load_mapping(path)
    {'s_par': 0.71, 'w': 0.19}
    """
    path = Path(path)
    try:
        text = read_text(path)
    except PevpmError as exc:
        raise AnalyticError(str(exc)) from None
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            raise AnalyticError(f"{path}: use a .toml, .yaml or .yml file")
    except (tomllib.TOMLDecodeError, yaml.YAMLError, ValueError) as exc:
        raise AnalyticError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from None
    except RecursionError:
        raise AnalyticError(f"{path}: not valid {path.suffix[1:].upper()}: nested too "
                            "deeply") from None
    if not isinstance(data, dict):
        raise AnalyticError(f"{path}: expected a table of name = value pairs")
    return data


def parse_counts(text: str) -> list[int]:
    """Positive integers from ``"1,2,8"``, ``"a..b"`` (every integer) or ``"a..b*k"`` (x k)."""
    counts: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if ".." in part:
                low, _, rest = part.partition("..")
                high, _, factor = rest.partition("*")
                low_i, high_i = int(low), int(high)
                step = int(factor) if factor else None
                if low_i < 1 or high_i < low_i or (step is not None and step < 2):
                    raise ValueError
                value = low_i
                while value <= high_i:
                    counts.append(value)
                    value = value * step if step else value + 1
            else:
                value = int(part)
                if value < 1:
                    raise ValueError
                counts.append(value)
        except ValueError:
            raise AnalyticError(f"bad count list {text!r}: use e.g. 1,2,4 or 1..64*2 "
                                f"(positive integers; a..b*k multiplies by k)") from None
    return counts


def _csv_rows(path: Path):
    """``(line, row)`` of a CSV file with a header, read by :func:`pevpm.files.read_text`."""
    try:
        rows = list(csv.DictReader(io.StringIO(read_text(path), newline="")))
    except PevpmError as exc:
        raise AnalyticError(str(exc)) from None
    except csv.Error as exc:
        raise AnalyticError(f"not a CSV file ({exc})", where=str(path)) from None
    return list(enumerate(rows, start=2))


def _whole(text) -> int:
    """A count written in a CSV cell: a whole number of at most 300 digits."""
    value = parse_number(str(text))
    if not isinstance(value, int):
        raise PevpmError(f"not a whole number: {text!r}")
    return value


def read_times(path: str | Path) -> tuple[list[int], list[float]]:
    """Measured run times from a CSV file with columns ``n`` (processes) and ``time``
    (seconds), one row per run or per count; one of the counts must be 1.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "times.csv")
    ...     _ = open(path, "w").write("n,time\\n1,2.0\\n2,1.1\\n4,0.65\\n")
    ...     read_times(path)
    ([1, 2, 4], [2.0, 1.1, 0.65])
    """
    path = Path(path)
    counts, times = [], []
    for line, row in _csv_rows(path):
        try:
            counts.append(_whole(row["n"]))
            times.append(float(parse_number(row["time"])))
        except (KeyError, TypeError, PevpmError):
            raise AnalyticError("need an integer n and a number time (seconds)",
                                where=f"{path}:{line}") from None
    if 1 not in counts:
        raise AnalyticError(f"{path}: needs a run on 1 process (n = 1) to compute speedups")
    return counts, times


def read_speedups(path: str | Path) -> tuple[list[int], list[int], list[float]]:
    """Observed speedups from a CSV file with columns ``p``, ``d``, ``speedup``.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "observed.csv")
    ...     _ = open(path, "w").write("p,d,speedup\\n16,1,5.7\\n64,8,8.9\\n")
    ...     read_speedups(path)
    ([16, 64], [1, 8], [5.7, 8.9])
    """
    path = Path(path)
    p, d, s = [], [], []
    for line, row in _csv_rows(path):
        try:
            p.append(_whole(row["p"]))
            d.append(_whole(row["d"]))
            s.append(float(parse_number(row["speedup"])))
        except (KeyError, TypeError, PevpmError):
            raise AnalyticError("need integer p, integer d and a number speedup",
                                where=f"{path}:{line}") from None
    if not s:
        raise AnalyticError(f"{path}: no rows (expected a header p,d,speedup)")
    return p, d, s
