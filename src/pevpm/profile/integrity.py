"""Is a profile file whole?  Checked once when it is opened, before any reader
relies on it.

:func:`check_profile` runs SQLite's own integrity check, then checks the
header (format tag, a whole-number schema version this pevpm reads), that
every table has the columns of the schema, and every row: whole numbers and
finite numbers where the readers compute with them, in the ranges they
assume (sizes >= 0, counts > 0, placements >= 1), JSON columns that decode to
the shape the readers expect, sample blobs whose lengths fit their type, and
a summary, a histogram and raw times for every block.  The first bad row
stops it with a :class:`~pevpm.errors.ProfileError` naming the file, the
table, the row and the value.

>>> import sqlite3
>>> conn = sqlite3.connect(":memory:")
>>> check_profile(conn, "empty.db")
Traceback (most recent call last):
...
pevpm.errors.ProfileError: empty.db: not a pevpm machine profile (no meta table)
"""

from __future__ import annotations

import json
import math
import sqlite3
import time

from pevpm.errors import ProfileError
from pevpm.host import WAIT_STYLES

# Column kinds: INT (whole number, with a least value), REAL (finite, with a
# least value or None), ANY_REAL (a number, infinities allowed), TEXT, TEXT_OR_NULL,
# JSON_* (text that decodes to that shape), BLOB8/BLOB4_OR_NULL (blob whose
# length is a multiple of 8 / 4 bytes, the first non-empty).
INT, REAL, ANY_REAL, TEXT, TEXT_OR_NULL = "int", "real", "any-real", "text", "text?"
JSON_STRINGS, JSON_OBJECT, JSON_ANY, JSON_QUANTILES = "json[str]", "json{}", "json", "json-q"
BLOB8, BLOB4_OR_NULL = "blob8", "blob4?"

#: Longest the whole check of one profile may take (seconds): a sound profile of
#: the largest benchmark takes well under one; SQLite's progress handler stops
#: a statement past it.
CHECK_SECONDS = 30
#: SQLite virtual-machine steps between two looks at the clock.
PROGRESS_STEPS = 10_000

#: table -> ((column, kind, least value), ...): what the readers rely on.
RULES: dict[str, tuple[tuple[str, str, float | None], ...]] = {
    "meta": (("key", TEXT, None), ("value", TEXT, None)),
    "runs": (("id", INT, 0), ("n", INT, 1), ("p", INT, 1), ("hosts", JSON_STRINGS, None),
             ("mpi_library", TEXT, None), ("mpi_version", TEXT, None), ("clock", TEXT, None),
             ("clock_resolution", REAL, 0), ("sync_method", TEXT, None),
             ("resend_limit", INT, 0), ("plan", JSON_OBJECT, None), ("started", TEXT, None),
             ("finished", TEXT_OR_NULL, None)),
    "clock_sync": (("run_id", INT, 0), ("rank", INT, 0), ("host", TEXT, None),
                   ("offset", REAL, None), ("drift", REAL, None), ("error", REAL, 0)),
    "blocks": (("id", INT, 0), ("run_id", INT, 0), ("test", TEXT, None), ("variant", TEXT, None),
               ("size", INT, 0), ("n", INT, 1), ("p", INT, 1), ("reps", INT, 0),
               ("warmup", INT, 0), ("start_mode", TEXT, None), ("ranks", INT, 1),
               ("samples", INT, 1), ("raw_kept", INT, 0), ("outlier_percentile", REAL, 0),
               ("outlier_multiplier", REAL, 0), ("sync_error", REAL, 0), ("elapsed", REAL, 0),
               ("budget_limited", INT, 0), ("created", TEXT, None)),
    "raw_times": (("block_id", INT, 0), ("rank", INT, 0), ("reps", BLOB4_OR_NULL, None),
                  ("times", BLOB8, None)),
    "outliers": (("block_id", INT, 0), ("rank", INT, 0), ("rep", INT, 0),
                 ("seconds", REAL, None)),
    "histograms": (("block_id", INT, 0), ("low", REAL, None), ("bin_width", REAL, 0),
                   ("counts", BLOB8, None)),
    "summaries": (("block_id", INT, 0), ("count", INT, 1), ("outliers", INT, 0),
                  ("outlier_threshold", ANY_REAL, None), ("min", REAL, None),
                  ("mean", REAL, None), ("std", REAL, 0), ("max", REAL, None),
                  ("quantiles", JSON_QUANTILES, None)),
    "fits": (("block_id", INT, 0), ("family", TEXT, None), ("params", JSON_OBJECT, None),
             ("goodness", JSON_OBJECT, None), ("created", TEXT, None)),
    "calibration": (("key", TEXT, None), ("value", JSON_ANY, None), ("created", TEXT, None)),
}

#: Tables added after schema version 1 shipped: checked when a profile has them.
OPTIONAL_RULES: dict[str, tuple[tuple[str, str, float | None], ...]] = {
    "conditions": (("block_id", INT, 0), ("others", REAL, 0), ("load", REAL, 0),
                   ("cores", INT, 1)),
    "stability": (("block_id", INT, 0), ("first_median", REAL, None),
                  ("second_median", REAL, None), ("p_value", REAL, 0), ("retries", INT, 0),
                  ("max_shift", REAL, 0), ("max_p", REAL, 0), ("check_kind", TEXT, None)),
    "binding_costs": (("block_id", INT, 0), ("python_median", REAL, None),
                      ("c_median", REAL, None)),
}

#: Tables every block needs a row in (the readers fetch exactly one, or at least one).
BLOCK_PARTS = ("summaries", "histograms", "raw_times")


def check_profile(conn: sqlite3.Connection, path: str, format_tag: str = "pevpm-profile",
                  schema_version: int = 1) -> None:
    """Raise :class:`ProfileError` unless the profile open on ``conn`` is whole
    (see the module doc)."""
    factory = conn.text_factory
    conn.text_factory = _lenient_text        # undecodable text is reported, not raised
    deadline, stopped = time.monotonic() + CHECK_SECONDS, []

    def past_deadline() -> bool:
        if time.monotonic() > deadline:
            stopped.append(True)
        return bool(stopped)

    conn.set_progress_handler(past_deadline, PROGRESS_STEPS)
    try:
        _check_sqlite(conn, path)
        _check_tables(conn, path)
        _check_header(conn, path, format_tag, schema_version)
        _check_columns(conn, path)
        for table, rules in RULES.items():
            _check_rows(conn, path, table, rules)
        for table, rules in OPTIONAL_RULES.items():
            if conn.execute(f"PRAGMA table_info({table})").fetchone():
                _check_rows(conn, path, table, rules)
        _check_block_parts(conn, path)
    except (sqlite3.DatabaseError, UnicodeDecodeError, ProfileError) as exc:
        if stopped:
            raise ProfileError(f"checking the profile took more than {CHECK_SECONDS} s: too "
                               "large or built to never end", where=path) from None
        if isinstance(exc, ProfileError):
            raise
        raise ProfileError(f"damaged profile ({_printable(str(exc))})", where=path) from None
    finally:
        conn.set_progress_handler(None, 0)
        conn.text_factory = factory


def _check_tables(conn: sqlite3.Connection, path: str) -> None:
    """Every name the schema reads is a table: a view (which may compute
    anything, an endless recursive query too) or an index in its place is
    refused before it is read, and so is any trigger (which runs its own
    query, an endless one too, on a write)."""
    rows = conn.execute("SELECT name, type FROM sqlite_master").fetchall()
    triggers = [name for name, kind in rows if kind == "trigger"]
    if triggers:        # pevpm makes none; one runs any query on every write
        raise ProfileError(f"damaged profile: it has a trigger ({_printable(str(triggers[0]))}),"
                           " which pevpm never makes", where=path)
    kinds = dict(rows)
    for name in (*RULES, *OPTIONAL_RULES):
        if name in kinds and kinds[name] != "table":
            raise ProfileError(f"damaged profile: {name!r} is a {_printable(str(kinds[name]))}, "
                               "not a table", where=path)


def _lenient_text(data: bytes) -> str:
    """Text as SQLite holds it; bytes that are not UTF-8 become lone surrogates."""
    return data.decode("utf-8", "surrogateescape")


def _printable(text: str, width: int = 120) -> str:
    """``text`` on one line of printable characters, at most ``width`` long.

    >>> _printable("bad\\n\\udc80text")
    'bad ?text'
    """
    shown = "".join(ch if ch.isprintable() else " " if ch.isspace() else "?" for ch in text)
    shown = " ".join(shown.split())
    return shown if len(shown) <= width else shown[:width - 3] + "..."


def _check_sqlite(conn: sqlite3.Connection, path: str) -> None:
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check(5)")]
    except sqlite3.DatabaseError as exc:
        raise ProfileError(f"not a pevpm machine profile ({_printable(str(exc))})",
                           where=path) from None
    if problems != ["ok"]:
        first = " ".join(problems).replace("*** in database main ***", "")
        raise ProfileError(f"damaged profile (SQLite integrity check: {_printable(first)})",
                           where=path)


def _check_header(conn, path: str, format_tag: str, schema_version: int) -> None:
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    if "meta" not in names:
        raise ProfileError("not a pevpm machine profile (no meta table)", where=path)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    for key, value in meta.items():
        if not (isinstance(key, str) and isinstance(value, str) and _valid_text(key + value)):
            raise ProfileError(f"damaged profile: meta row {_shown(key)} is not valid text",
                               where=path)
    if meta.get("format") != format_tag:
        raise ProfileError("not a pevpm machine profile (wrong format tag)", where=path)
    cores = meta.get("cores", "").strip()
    if cores and not (cores.isascii() and cores.isdigit() and int(cores) >= 1):
        raise ProfileError(f"damaged profile: meta cores {_shown(cores)} is not a whole "
                           "number >= 1", where=path)
    if meta.get("wait", "poll") not in WAIT_STYLES:
        raise ProfileError(f"damaged profile: meta wait {_shown(meta['wait'])} is not one of "
                           f"{', '.join(WAIT_STYLES)}", where=path)
    raw = meta.get("schema_version", "0")
    if not (raw.strip().isascii() and raw.strip().isdigit()):
        raise ProfileError(f"damaged profile: schema version {_shown(raw)} is not a whole "
                           "number", where=path)
    version = int(raw)
    if version > schema_version:
        raise ProfileError(f"profile schema version {version} is newer than this pevpm "
                           f"understands ({schema_version}); upgrade pevpm", where=path)
    if version < schema_version:
        raise ProfileError(f"profile schema version {version} is too old", where=path)


def _check_columns(conn, path: str) -> None:
    for table, rules in RULES.items():
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if not have:
            raise ProfileError(f"damaged profile: table {table!r} is missing", where=path)
        missing = [column for column, _, _ in rules if column not in have]
        if missing:
            raise ProfileError(f"damaged profile: table {table!r} lacks column(s) "
                               f"{', '.join(missing)}", where=path)


def _selected(column: str, kind: str) -> str:
    if kind in (BLOB8, BLOB4_OR_NULL):
        return f"typeof({column}), length({column})"
    return f"typeof({column}), {column}"


def _check_rows(conn, path: str, table: str, rules) -> None:
    columns = ", ".join(_selected(column, kind) for column, kind, _ in rules)
    for row in conn.execute(f"SELECT rowid, {columns} FROM {table}"):
        rowid, cells = row[0], row[1:]
        for i, (column, kind, least) in enumerate(rules):
            problem = _problem(kind, least, cells[2 * i], cells[2 * i + 1])
            if problem:
                raise ProfileError(f"damaged profile: {table} row {rowid}: {column} {problem}",
                                   where=path)


def _problem(kind: str, least, sql_type: str, value) -> str | None:
    """What is wrong with one cell (None when nothing)."""
    if kind == INT:
        if sql_type != "integer":
            return f"is {_shown(value)}, not a whole number"
        return f"is {value}, below {least}" if value < least else None
    if kind in (REAL, ANY_REAL):
        if sql_type not in ("integer", "real"):
            return f"is {_shown(value)}, not a number"
        if kind == REAL and not math.isfinite(value):
            return f"is {value}, not a finite number"
        return f"is {value}, below {least}" if least is not None and value < least else None
    if kind in (TEXT, TEXT_OR_NULL):
        if sql_type == "text" and not _valid_text(value):
            return f"is {_shown(value)}, not valid UTF-8 text"
        ok = sql_type == "text" or (kind == TEXT_OR_NULL and sql_type == "null")
        return None if ok else f"is {_shown(value)}, not text"
    if kind in (BLOB8, BLOB4_OR_NULL):
        width = 8 if kind == BLOB8 else 4
        if kind == BLOB4_OR_NULL and sql_type == "null":
            return None
        if sql_type != "blob" or value % width or (kind == BLOB8 and value == 0):
            return f"holds {value} bytes of {sql_type}, not a whole number of {width}-byte values"
        return None
    return _json_problem(kind, sql_type, value)


def _valid_text(text: str) -> bool:
    """No byte that failed to decode (see :func:`_lenient_text`)."""
    return not any("\udc80" <= ch <= "\udcff" for ch in text)


def _json_problem(kind: str, sql_type: str, value) -> str | None:
    if sql_type != "text" or not _valid_text(value):
        return f"is {_shown(value)}, not JSON text"
    try:
        data = json.loads(value, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        return f"is not valid JSON ({exc})"
    if kind == JSON_STRINGS and not (isinstance(data, list)
                                     and all(isinstance(s, str) for s in data)):
        return "must be a JSON list of strings"
    if kind == JSON_OBJECT and not isinstance(data, dict):
        return "must be a JSON object"
    if kind == JSON_QUANTILES:
        if not isinstance(data, dict) or "50" not in data:
            return "must be a JSON object of percentiles including 50"
        for key, number in data.items():
            if not (key.isascii() and key.isdigit()) or isinstance(number, bool) \
                    or not isinstance(number, (int, float)) or not math.isfinite(number):
                return f"has {key!r}: {number!r}, not a percentile and a finite number"
    return None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a finite number")


def _shown(value) -> str:
    return _printable(repr(value), 40)


def _check_block_parts(conn, path: str) -> None:
    for table in BLOCK_PARTS:
        row = conn.execute(f"SELECT id, test, size, n, p FROM blocks WHERE id NOT IN "
                           f"(SELECT block_id FROM {table}) ORDER BY id LIMIT 1").fetchone()
        if row is not None:
            raise ProfileError(f"damaged profile: blocks row {row[0]} ({row[1]} {row[2]} B "
                               f"{row[3]}x{row[4]}) has no {table} row", where=path)
    row = conn.execute("SELECT b.id, s.count, b.samples FROM blocks b JOIN summaries s "
                       "ON s.block_id = b.id WHERE s.count != b.samples LIMIT 1").fetchone()
    if row is not None:
        raise ProfileError(f"damaged profile: blocks row {row[0]} says {row[2]} samples but "
                           f"its summary counts {row[1]}", where=path)
