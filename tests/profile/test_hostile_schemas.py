"""A profile whose tables were replaced by views (one may compute an endless
recursive query) is refused before it is read, and the whole check is bounded
in time by SQLite's progress handler (issue 30, item 4)."""

import shutil
import sqlite3
import time

import pytest

from pevpm.cli import main
from pevpm.profile import integrity
from pevpm.profile.store import default_profile_path

ENDLESS = ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
           "SELECT {table}_old.* FROM {table}_old, r")


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "machine.db"
    shutil.copy(default_profile_path(), path)
    return path


@pytest.mark.parametrize("table", ["runs", "blocks", "meta"])
@pytest.mark.parametrize("command", [["profile", "show"], ["profile", "export-csv"]])
def test_a_view_in_place_of_a_table(profile, capsys, table, command):
    with sqlite3.connect(profile) as conn:
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_old")
        conn.execute(f"CREATE VIEW {table} AS " + ENDLESS.format(table=table))
    started = time.monotonic()
    assert main([*command, str(profile)]) == 2
    assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert f"'{table}' is a view, not a table" in err and "Traceback" not in err


def test_the_check_is_bounded_in_time(profile, capsys, monkeypatch):
    monkeypatch.setattr(integrity, "CHECK_SECONDS", 0)
    assert main(["profile", "show", str(profile)]) == 2
    assert "checking the profile took more than 0 s" in capsys.readouterr().err
