"""What a report's ``results.json`` must hold, checked before drawing (issue 30).

``pevpm report DIR`` redraws the page from ``DIR/results.json``, a file a
user may have edited (or damaged).  :func:`check_results` compares it with
:data:`RESULTS`, a declaration of every field the page and its plots read,
and reports the first wrong one by its path, so a wrong type is one line
instead of a traceback from deep inside the plotting code.

A schema is a :class:`Field` (a leaf: what it accepts), a ``dict`` (an
object with these keys; a key starting with ``?`` may be missing; other
keys are ignored), a one-element ``list`` (a list of such items) or a
:class:`MapOf` (an object whose values all follow one schema).

>>> check_results({"title": "demo", "scaling": {"jacobi": [{"n": 2, "mean": 1, "sd": 0}]}})
>>> check_results({"scaling": {"jacobi": [{"n": 2, "mean": "fast", "sd": 0}]}}, "r.json")
Traceback (most recent call last):
...
pevpm.errors.PevpmError: r.json: scaling.jacobi[0].mean: expected a number >= 0, got 'fast'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pevpm.errors import PevpmError
from pevpm.values import checked_number


@dataclass(frozen=True)
class Field:
    """A leaf of a schema: ``accepts(value)`` and the words for what it wants.

    >>> COUNT.accepts(4), COUNT.accepts(True), COUNT.wants
    (True, False, 'a whole number >= 1')
    """

    wants: str
    accepts: Callable[[object], bool]


@dataclass(frozen=True)
class MapOf:
    """An object whose every value follows ``schema`` (keys are names).

    >>> check_results({"machine": {"hosts": "node0", "cores": 2}})
    >>> MapOf(TEXT).schema is TEXT
    True
    """

    schema: object


def _number(value) -> bool:
    """A finite number by :func:`pevpm.values.checked_number`'s rules (a whole
    number of 400 digits is not: it overflows a float)."""
    try:
        checked_number(value)
    except PevpmError:
        return False
    return True


TEXT = Field("text", lambda v: isinstance(v, str))
NUMBER = Field("a finite number", _number)
NON_NEGATIVE = Field("a number >= 0", lambda v: _number(v) and v >= 0)
POSITIVE = Field("a number > 0", lambda v: _number(v) and v > 0)
COUNT = Field("a whole number >= 1", lambda v: isinstance(v, int) and not isinstance(v, bool)
              and 1 <= v <= 2**31)
RANK = Field("a whole number >= 0", lambda v: isinstance(v, int) and not isinstance(v, bool)
             and 0 <= v <= 2**31)
SHOWN = Field("text or a number", lambda v: isinstance(v, str) or _number(v)
              or isinstance(v, bool) or v is None)
OPTIONAL_NUMBER = Field("a number >= 0 or null", lambda v: v is None or (_number(v) and v >= 0))

ROW = {"n": COUNT, "measured_mean": POSITIVE, "measured_sd": NON_NEGATIVE,
       "predictions": MapOf(NON_NEGATIVE), "?measured_others": NON_NEGATIVE,
       "?calibration_others": OPTIONAL_NUMBER}
POINT = {"n": COUNT, "mean": NON_NEGATIVE, "sd": NON_NEGATIVE}
BREAKDOWN = {"numprocs": COUNT, "ranks": [{"compute": NON_NEGATIVE,
                                           "communication": NON_NEGATIVE,
                                           "waiting": NON_NEGATIVE}]}
COLLECTIVE = {"title": TEXT, "completions": [NUMBER], "?caption": TEXT}
FIGURE = {"file": TEXT, "title": TEXT, "?caption": TEXT}
EXPLAIN_ROW = {key: SHOWN for key in ("kind", "op", "exchange", "block", "sizes",
                                      "contention", "messages")}
LINKS = {"network": TEXT, "rows": [{
    "link": TEXT, "utilisation": NON_NEGATIVE, "messages": RANK, "bytes": RANK,
    "waited": NON_NEGATIVE,
    "slowed": Field("text or null", lambda v: v is None or isinstance(v, str))}],
    "?placement": {"topology": TEXT, "how": TEXT, "node_of": [RANK]}}
RECORDED = {"recorded_seconds": NON_NEGATIVE, "predicted_seconds": NON_NEGATIVE,
            "trace": TEXT, "numprocs": COUNT, "predicted_by": TEXT, "machine": TEXT,
            "perfetto": TEXT,
            "ranks": [{"rank": RANK, **{key: NUMBER for key in (
                "recorded", "predicted", "recorded_mpi", "predicted_mpi",
                "recorded_compute", "predicted_compute")}}]}

NOISE_VIEW = {"model": TEXT, "machine": TEXT, "calibration": TEXT, "scaling": TEXT,
              "curves": MapOf([POINT])}

#: Every field of ``results.json`` the report reads.
RESULTS = {"?title": TEXT, "?notes": [TEXT], "?machine": MapOf(SHOWN),
           "?validation": MapOf([ROW]), "?scaling": MapOf([POINT]),
           "?breakdowns": MapOf(BREAKDOWN), "?collectives": [COLLECTIVE],
           "?explain": MapOf([EXPLAIN_ROW]), "?links": MapOf(LINKS), "?figures": [FIGURE],
           "?trace": TEXT, "?recorded": RECORDED, "?noise": MapOf(NOISE_VIEW)}


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _wrong(path: str, wants: str, value, where: str | None) -> PevpmError:
    return PevpmError(f"{path or 'the top level'}: expected {wants}, got {_shown(value)}", where)


def check_results(results, where: str | None = None) -> None:
    """Raise one :class:`PevpmError` naming the first field of ``results`` that
    does not follow :data:`RESULTS` (see the module's example); ``where`` is
    the file's name."""
    stack = [(results, RESULTS, "")]
    while stack:
        value, schema, path = stack.pop()
        if isinstance(schema, Field):
            if not schema.accepts(value):
                raise _wrong(path, schema.wants, value, where)
        elif isinstance(schema, list):
            if not isinstance(value, list):
                raise _wrong(path, "a list", value, where)
            stack.extend((item, schema[0], f"{path}[{i}]")
                         for i, item in reversed(list(enumerate(value))))
        elif isinstance(schema, MapOf):
            if not isinstance(value, dict):
                raise _wrong(path, "an object", value, where)
            stack.extend((item, schema.schema, f"{path}.{key}" if path else str(key))
                         for key, item in reversed(list(value.items())))
        else:
            if not isinstance(value, dict):
                raise _wrong(path, "an object", value, where)
            missing = [k for k in schema if not k.startswith("?") and k not in value]
            if missing:
                raise PevpmError(f"{path + '.' if path else ''}{missing[0]}: missing", where)
            stack.extend((value[key.lstrip("?")], sub, f"{path}.{key.lstrip('?')}" if path
                          else key.lstrip("?"))
                         for key, sub in reversed(list(schema.items()))
                         if key.lstrip("?") in value)
