"""Damaged profiles are refused at open with the file and the first bad row (issue 16)."""

from __future__ import annotations

import shutil
import sqlite3

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.errors import ProfileError
from pevpm.profile.store import BlockKey, Profile, ProfileWriter, default_profile_path


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "copy.db"
    shutil.copyfile(default_profile_path(), path)
    return path


def damage(path, *statements):
    conn = sqlite3.connect(path)
    with conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()


def refused(path) -> str:
    with pytest.raises(ProfileError) as info:
        Profile.open(path)
    assert str(info.value).startswith(f"{path}: ")
    return str(info.value)


@pytest.mark.parametrize("sql, expected", [
    ("UPDATE blocks SET size = -4 WHERE id = 1", "blocks row 1: size is -4, below 0"),
    ("UPDATE blocks SET size = 'big' WHERE id = 2", "blocks row 2: size is 'big', not a whole"),
    ("UPDATE summaries SET count = 0 WHERE rowid = 1", "summaries row 1: count is 0, below 1"),
    ("UPDATE summaries SET mean = 9e999 WHERE rowid = 3", ("summaries row 3: mean is inf, not a "
                                                          "finite number")),
    ("UPDATE runs SET hosts = '[1,' WHERE id = 1", "runs row 1: hosts is not valid JSON"),
    ("UPDATE runs SET plan = '[]' WHERE id = 1", "runs row 1: plan must be a JSON object"),
    ("UPDATE summaries SET quantiles = '{\"50\": NaN}' WHERE rowid = 1",
     "summaries row 1: quantiles is not valid JSON (NaN is not a finite number)"),
    ("UPDATE raw_times SET times = X'0102030405' WHERE rowid = 1",
     "raw_times row 1: times holds 5 bytes of blob, not a whole number of 8-byte values"),
    ("UPDATE meta SET value = 'one' WHERE key = 'schema_version'",
     "schema version 'one' is not a whole number"),
    ("DROP TABLE fits", "table 'fits' is missing"),
    ("UPDATE meta SET value = 'two' WHERE key = 'cores'", "meta cores 'two' is not a whole"),
    ("UPDATE meta SET value = '0' WHERE key = 'cores'", "meta cores '0' is not a whole number"),
    ("INSERT INTO meta(key, value) VALUES ('wait', 'spin')", "meta wait 'spin' is not one of"),
    ("DELETE FROM summaries WHERE block_id = 5", "blocks row 5 ("),
])
def test_damage_is_refused_naming_the_row(profile, sql, expected):
    damage(profile, sql)
    assert expected in refused(profile)


def test_damage_past_the_first_pages_fails_the_integrity_check(profile):
    data = bytearray(profile.read_bytes())
    for page in range(4, len(data) // 4096, 7):
        data[page * 4096 + 100:page * 4096 + 140] = b"\xff" * 40
    profile.write_bytes(bytes(data))
    assert "damaged profile" in refused(profile)


def test_readers_open_read_only(profile):
    with Profile.open(profile) as prof, \
            pytest.raises(sqlite3.OperationalError, match="readonly"):
        prof._conn.execute("DELETE FROM calibration")


def test_writer_refuses_to_append_to_a_damaged_profile(profile):
    damage(profile, "UPDATE blocks SET n = 0 WHERE id = 3")
    before = profile.read_bytes()
    with pytest.raises(ProfileError, match="blocks row 3: n is 0, below 1"):
        ProfileWriter.open(profile)
    assert profile.read_bytes() == before


def test_writer_still_appends_to_a_whole_profile(tmp_path):
    path = tmp_path / "new.db"
    with ProfileWriter.open(path, machine="m") as w:
        run = w.begin_run(n=1, p=2, hosts=["a"], mpi_library="x", mpi_version="1", clock="c",
                          clock_resolution=1e-9, sync_method="pairwise", resend_limit=0, plan={})
        w.write_block(run, BlockKey("isend", "", 8, 1, 2), np.full((2, 5), 1e-6), reps=5,
                      warmup=0, start_mode="barrier", sync_error=0.0, elapsed=0.1)
    with Profile.open(path) as prof:
        assert prof.summary("isend", 8).count == 10


@pytest.mark.parametrize("command", [["profile", "show"], ["profile", "export-csv"],
                                     ["fit", "--no-plots", "--no-progress"]])
def test_commands_give_one_line(profile, capsys, command):
    damage(profile, "UPDATE histograms SET bin_width = -1 WHERE rowid = 2")
    argv = [*command[:2], str(profile), *command[2:]] if command[0] == "profile" \
        else [command[0], str(profile), *command[1:]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"pevpm: error: {profile}: damaged profile: histograms row 2: bin_width is " \
                  "-1.0, below 0"


def test_text_that_is_not_utf8_is_reported_on_one_line(profile):
    damage(profile, "UPDATE summaries SET quantiles = CAST(X'7B2231223A20B0FF0A7D' AS TEXT) "
                    "WHERE rowid = 2",
           "UPDATE meta SET value = 'x' WHERE key = 'created'")
    message = refused(profile)
    assert "summaries row 2: quantiles is" in message and "not JSON text" in message
    assert "\n" not in message


def test_a_key_that_is_not_utf8_in_meta_is_reported(profile):
    damage(profile, "UPDATE meta SET key = CAST(X'80FF' AS TEXT) WHERE key = 'created'")
    assert "meta row" in refused(profile)


def test_writer_refuses_non_finite_times(tmp_path):
    with ProfileWriter.open(tmp_path / "w.db") as w, \
            pytest.raises(ProfileError, match="times must be finite numbers"):
        w.write_block(1, BlockKey("isend", "", 8, 1, 2), np.array([[1e-6, np.inf]]), reps=2,
                      warmup=0, start_mode="barrier", sync_error=0.0, elapsed=0.1)


def test_a_profile_without_cores_or_wait_is_accepted_and_shares_nothing(profile):
    damage(profile, "DELETE FROM meta WHERE key = 'cores'")
    from pevpm.machine.profile_model import machine_from_profile
    topology = machine_from_profile(str(profile)).topology
    assert (topology.cores, topology.wait) == (None, "poll")
    assert not topology.place(8).oversubscribed
