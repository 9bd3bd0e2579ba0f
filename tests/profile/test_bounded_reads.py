"""A hostile profile ends in one clean error, never a hang (issue 30): triggers are
refused when it is opened, and every read after the check runs under a deadline
(:mod:`pevpm.profile.bounded`)."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from pevpm.cli import main
from pevpm.errors import ProfileError
from pevpm.profile.store import Profile, ProfileWriter, default_profile_path

ENDLESS = ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
           "SELECT max(x) FROM r")


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "machine.db"
    shutil.copy(default_profile_path(), path)
    return path


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_a_profile_with_an_endless_trigger_is_refused(profile, capsys):
    """The trigger would run its endless query on pevpm fit's first stored fit."""
    with sqlite3.connect(profile) as conn:
        conn.execute(f"CREATE TRIGGER spin AFTER INSERT ON fits BEGIN "
                     f"INSERT INTO calibration SELECT 'k', x, 'now' FROM ({ENDLESS}); END")
    conn.close()
    assert main(["profile", "show", str(profile)]) == 2
    assert one_error(capsys) == (f"pevpm: error: {profile}: damaged profile: it has a trigger "
                                 "(spin), which pevpm never makes")
    with pytest.raises(ProfileError, match="it has a trigger"):
        ProfileWriter.open(profile)


def test_an_endless_read_after_the_check_ends_in_one_error(profile, monkeypatch):
    from pevpm.profile import bounded

    monkeypatch.setattr(bounded, "STATEMENT_SECONDS", 0.2)
    with Profile.open(profile) as prof:
        with pytest.raises(ProfileError, match=r"took more than 0\.2 s in one query"):
            prof._conn.execute(ENDLESS).fetchone()
        assert prof.machine.name == "dev-vm"          # the next read has its own 0.2 s


def test_reads_past_the_budget_are_one_clean_error_on_the_command_line(profile, monkeypatch,
                                                                       capsys):
    from pevpm.profile import bounded

    monkeypatch.setattr(bounded, "STATEMENT_SECONDS", 0.0)
    assert main(["profile", "show", str(profile)]) == 2
    assert one_error(capsys) == (f"pevpm: error: {profile}: reading the profile took more "
                                 "than 0 s in one query: too large or built to never end")


def test_a_missing_optional_table_is_still_the_readers_to_handle(profile):
    with Profile.open(profile) as prof:
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            prof._conn.execute("SELECT * FROM no_such_table")
