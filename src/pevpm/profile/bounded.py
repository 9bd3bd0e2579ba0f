"""Profile reads bounded in time (issue 30).

A profile is a file anyone can hand pevpm, and SQLite runs whatever query
plan its schema leads to.  :func:`pevpm.profile.integrity.check_profile`
refuses views and triggers and reads every row once (under its own deadline);
after it, every statement on a read connection still runs under SQLite's
progress handler: one that runs past :data:`STATEMENT_SECONDS` (from its
``execute`` to its last row) is stopped and becomes one
:class:`~pevpm.errors.ProfileError` naming the file, never a hang.

>>> conn = connect_read_only(":memory:", "hostile.db", seconds=0.05)
>>> endless = ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
...            "SELECT max(x) FROM r")
>>> try:
...     conn.execute(endless).fetchone()
... except ProfileError as exc:
...     print(exc)
hostile.db: reading the profile took more than 0.05 s in one query: too large or built to never end
"""

from __future__ import annotations

import functools
import sqlite3
import time

from pevpm.errors import ProfileError
from pevpm.profile.integrity import PROGRESS_STEPS

#: Longest one read of a profile may take (seconds), from its ``execute`` to its
#: last row: the largest sound profile's largest read (every raw sample of a
#: block) takes well under one second here; a profile whose reads take longer
#: was built large or hostile on purpose.
STATEMENT_SECONDS = 30.0


class BoundedConnection(sqlite3.Connection):
    """A connection whose :meth:`execute` runs under a deadline once
    :meth:`bound` is called: a statement it stops is a :class:`ProfileError`."""

    path = ""
    seconds: float | None = None
    deadline = float("inf")

    def bound(self, path: str, seconds: float | None = None) -> None:
        """Stop every later statement after ``seconds`` (default
        :data:`STATEMENT_SECONDS`); name ``path`` in errors."""
        self.path = path
        self.seconds = STATEMENT_SECONDS if seconds is None else seconds
        self.set_progress_handler(self._past_deadline, PROGRESS_STEPS)

    def _past_deadline(self) -> bool:
        return time.monotonic() > self.deadline

    def execute(self, sql: str, parameters=()) -> sqlite3.Cursor:
        if self.seconds is not None:
            self.deadline = time.monotonic() + self.seconds
        return self.cursor(BoundedCursor).execute(sql, parameters)

    def check_stopped(self) -> None:
        """After an SQLite error: a :class:`ProfileError` if the deadline stopped the
        statement (other errors, a missing optional table, are the reader's)."""
        if self.seconds is not None and time.monotonic() > self.deadline:
            raise ProfileError(f"reading the profile took more than {self.seconds:g} s in one "
                               "query: too large or built to never end", where=self.path)


def _guarded(method):
    """``method`` of :class:`sqlite3.Cursor`, with a statement the deadline stopped
    turned into a :class:`ProfileError`."""
    @functools.wraps(method)
    def guarded(cursor, *args):
        try:
            return method(cursor, *args)
        except sqlite3.Error:
            cursor.connection.check_stopped()
            raise
    return guarded


class BoundedCursor(sqlite3.Cursor):
    """A cursor of a :class:`BoundedConnection`: a statement the deadline stopped
    is a :class:`ProfileError`, while it executes or while its rows are read."""

    execute = _guarded(sqlite3.Cursor.execute)
    fetchone = _guarded(sqlite3.Cursor.fetchone)
    fetchmany = _guarded(sqlite3.Cursor.fetchmany)
    fetchall = _guarded(sqlite3.Cursor.fetchall)
    __next__ = _guarded(sqlite3.Cursor.__next__)


def connect_read_only(database: str, path: str, seconds: float | None = None
                      ) -> BoundedConnection:
    """A :class:`BoundedConnection` to ``database`` (a ``file:`` URI opened
    read-only, or ``:memory:``), bounded at once; ``path`` names it in errors.
    Call :meth:`BoundedConnection.bound` again after a check that installs a
    progress handler of its own."""
    conn = sqlite3.connect(database, uri=database.startswith("file:"),
                           factory=BoundedConnection)
    conn.bound(path, seconds)
    return conn
