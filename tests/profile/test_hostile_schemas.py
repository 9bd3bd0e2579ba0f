"""A profile whose tables were replaced by views (one may compute an endless
recursive query) or that has a trigger is refused before it is read, the whole
check is bounded in time by SQLite's progress handler, and so is every read
after it (:mod:`pevpm.profile.bounded`) (issue 30, item 4)."""

import shutil
import sqlite3
import time

import pytest

from pevpm.cli import main
from pevpm.errors import ProfileError
from pevpm.profile import bounded, integrity
from pevpm.profile.store import Profile, ProfileWriter, default_profile_path

ENDLESS = ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
           "SELECT {table}_old.* FROM {table}_old, r")
ENDLESS_QUERY = ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
                 "SELECT max(x) FROM r")


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


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_a_profile_with_an_endless_trigger_is_refused(profile, capsys):
    """The trigger would run its endless query on pevpm fit's first stored fit."""
    with sqlite3.connect(profile) as conn:
        conn.execute(f"CREATE TRIGGER spin AFTER INSERT ON fits BEGIN "
                     f"INSERT INTO calibration SELECT 'k', x, 'now' FROM ({ENDLESS_QUERY}); END")
    conn.close()
    assert main(["profile", "show", str(profile)]) == 2
    assert one_error(capsys) == (f"pevpm: error: {profile}: damaged profile: it has a trigger "
                                 "(spin), which pevpm never makes")
    with pytest.raises(ProfileError, match="it has a trigger"):
        ProfileWriter.open(profile)


def test_an_endless_read_after_the_check_ends_in_one_error(profile, monkeypatch):
    monkeypatch.setattr(bounded, "STATEMENT_SECONDS", 0.2)
    with Profile.open(profile) as prof:
        with pytest.raises(ProfileError, match=r"took more than 0\.2 s in one query"):
            prof._conn.execute(ENDLESS_QUERY).fetchone()
        assert prof.machine.name == "dev-vm"          # the next read has its own 0.2 s


def test_reads_past_the_budget_are_one_clean_error_on_the_command_line(profile, monkeypatch,
                                                                       capsys):
    monkeypatch.setattr(bounded, "STATEMENT_SECONDS", 0.0)
    assert main(["profile", "show", str(profile)]) == 2
    assert one_error(capsys) == (f"pevpm: error: {profile}: reading the profile took more "
                                 "than 0 s in one query: too large or built to never end")


def test_a_missing_optional_table_is_still_the_readers_to_handle(profile):
    with Profile.open(profile) as prof:
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            prof._conn.execute("SELECT * FROM no_such_table")
