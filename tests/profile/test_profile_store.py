import sqlite3

import numpy as np
import pytest

from pevpm.errors import ProfileError
from pevpm.profile.store import (
    SCHEMA_VERSION,
    BlockKey,
    Profile,
    ProfileWriter,
    default_profile_path,
    parse_nxp,
)

RUN = {"n": 1, "p": 2, "hosts": ["h", "h"], "mpi_library": "MPICH 5", "mpi_version": "MPI 4.1",
       "clock": "perf_counter_ns", "clock_resolution": 1e-9, "sync_method": "pairwise",
       "resend_limit": 1000, "plan": {"tests": [["isend", ""]]}}


ISEND_1K = BlockKey("isend", "", 1024, 1, 2)


def _write(path, times, key=ISEND_1K, **kwargs):
    with ProfileWriter.open(path, machine="testbox") as writer:
        run = writer.begin_run(**RUN)
        writer.write_block(run, key, times, reps=times.shape[1], warmup=10,
                           start_mode="barrier", sync_error=2e-6, elapsed=0.1, **kwargs)
        writer.finish_run(run, [{"rank": r, "host": "h", "offset": 0.0, "drift": 0.0,
                                 "error": 1e-6 * r} for r in range(times.shape[0])])
    return key


def test_round_trip_of_samples_summary_outliers_histogram(tmp_path):
    times = np.full((2, 500), 5e-6)
    times[1, 7] = 1.0
    key = _write(tmp_path / "m.db", times, bin_width=1e-6)
    with Profile.open(tmp_path / "m.db") as prof:
        assert prof.blocks() == [key]
        assert prof.machine.name == "testbox" and prof.machine.placements == ["1x2"]
        assert prof.runs()[0].sync_error == {0: 0.0, 1: 1e-6}
        assert np.array_equal(prof.samples("isend", 1024), times.ravel())
        assert prof.samples("isend", 1024, nxp="1x2", by_rank=True).shape == (2, 500)
        summary = prof.summary("isend", 1024)
        assert (summary.count, summary.outliers, summary.min, summary.max) == (1000, 1, 5e-6, 1.0)
        assert summary.median == 5e-6 and summary.outlier_threshold == pytest.approx(5e-5)
        assert prof.outliers(key).tolist() == [1.0]
        assert prof.histogram(key).counts.tolist() == [999]
        assert prof.block_info(key)["reps"] == 500


def test_huge_blocks_keep_a_seeded_subsample_but_exact_statistics(tmp_path):
    times = np.random.default_rng(3).gamma(4, 1e-6, size=(4, 1000))
    key = _write(tmp_path / "m.db", times, max_raw_samples=400, seed=11)
    with Profile.open(tmp_path / "m.db") as prof:
        kept = prof.samples(key, by_rank=True)
        assert kept.shape == (4, 100)
        assert set(kept[2]) <= set(times[2])
        assert prof.summary(key).count == 4000
        assert prof.summary(key).mean == pytest.approx(times.mean())
        assert prof.histogram(key).total + prof.summary(key).outliers == 4000


def test_fits_and_calibration_are_stored_by_the_writer(tmp_path):
    key = _write(tmp_path / "m.db", np.ones((2, 3)))
    with ProfileWriter.open(tmp_path / "m.db") as writer:
        writer.store_fit(key, "pearson5", {"a": 3.0, "loc": 1e-6, "scale": 2e-6}, {"ks": 0.01})
        writer.set_calibration("jacobi.update_s", [1.5e-6, 0.1e-6])
    with Profile.open(tmp_path / "m.db") as prof:
        fit = prof.fits("isend", 1024)["pearson5"]
        assert fit.params["a"] == 3.0 and fit.goodness == {"ks": 0.01}
        assert prof.calibration() == {"jacobi.update_s": [1.5e-6, 0.1e-6]}
        assert prof.stored_fits() == [(key, "pearson5")]


def test_rewriting_a_block_replaces_it(tmp_path):
    _write(tmp_path / "m.db", np.ones((2, 3)))
    _write(tmp_path / "m.db", np.full((2, 4), 2.0))
    with Profile.open(tmp_path / "m.db") as prof:
        assert prof.samples("isend", 1024).tolist() == [2.0] * 8


def test_lookup_errors_name_what_exists(tmp_path):
    _write(tmp_path / "m.db", np.ones((2, 3)))
    _write(tmp_path / "m.db", np.ones((2, 3)), key=BlockKey("scatter", "each", 8, 1, 2))
    _write(tmp_path / "m.db", np.ones((2, 3)), key=BlockKey("scatter", "total", 8, 1, 2))
    with Profile.open(tmp_path / "m.db") as prof:
        with pytest.raises(ProfileError, match="no block for isend size 8"):
            prof.samples("isend", 8)
        with pytest.raises(ProfileError, match="ambiguous"):
            prof.samples("scatter", 8)
        assert prof.samples("scatter", 8, variant="total").size == 6
        with pytest.raises(ProfileError, match="NxP"):
            prof.samples("isend", 1024, nxp="two by two")


def test_readers_cannot_write(tmp_path):
    _write(tmp_path / "m.db", np.ones((2, 3)))
    with Profile.open(tmp_path / "m.db") as prof, pytest.raises(sqlite3.OperationalError,
                                                                match="readonly"):
            prof._conn.execute("DELETE FROM blocks")


def test_foreign_missing_and_newer_files_are_clear_errors(tmp_path):
    with pytest.raises(ProfileError, match="no such profile"):
        Profile.open(tmp_path / "absent.db")
    (tmp_path / "text.db").write_text("hello, not a database" * 100)
    with pytest.raises(ProfileError, match="not a pevpm machine profile"):
        Profile.open(tmp_path / "text.db")
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE t(x)")
    other.commit()
    other.close()
    with pytest.raises(ProfileError, match="no meta table"):
        Profile.open(tmp_path / "other.db")
    _write(tmp_path / "new.db", np.ones((2, 3)))
    conn = sqlite3.connect(tmp_path / "new.db")
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(ProfileError, match="newer than this pevpm"):
        Profile.open(tmp_path / "new.db")


def test_parse_nxp():
    assert parse_nxp("16X2") == (16, 2)
    assert parse_nxp(None) is None


def test_default_profile_is_shipped_and_readable():
    with Profile.open(default_profile_path()) as prof:
        placements = prof.machine.placements
        assert "1x2" in placements and "1x4" in placements
        for test in ("isend", "isendlocal", "sendrecv", "bcast", "barrier", "alltoall",
                     "gather", "scatter", "allreduce"):
            assert prof.blocks(test=test, nxp="1x2"), test
        assert prof.samples("isend", 0, nxp="1x2").size > 0


def test_block_conditions_are_stored_replaced_and_absent_when_not_recorded(tmp_path):
    from pevpm.bench.results import conditions_note
    from pevpm.profile.store import BlockConditions

    times = np.full((2, 50), 5e-6)
    path = tmp_path / "m.db"
    _write(path, times, conditions=BlockConditions(others=0.05, load=0.3, cores=2))
    other = BlockKey("isend", "", 0, 1, 2)
    _write(path, times, key=other)                                    # no record
    with Profile.open(path) as prof:
        assert prof.block_conditions(ISEND_1K) == BlockConditions(0.05, 0.3, 2)
        assert prof.block_conditions(other) is None
        assert conditions_note(prof) == ("machine load while measuring: quiet (other "
                                          "processes used at most 0.05 cores during 1 blocks)")
        assert conditions_note(prof, quiet_too=False) is None
    _write(path, times, conditions=BlockConditions(others=1.4, load=3.0, cores=2))  # re-measured
    with Profile.open(path) as prof:
        assert prof.block_conditions(ISEND_1K).busy
        assert "1 of 1 blocks ran while other processes used more than 0.2 cores (worst " \
               "1.40 cores, isend 1024 B 1x2)" in conditions_note(prof, quiet_too=False)


def test_profiles_without_a_conditions_table_still_read(tmp_path):
    path = tmp_path / "m.db"
    _write(path, np.full((2, 50), 5e-6))
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE conditions")
    with Profile.open(path) as prof:
        assert prof.block_conditions(ISEND_1K) is None


def test_a_damaged_conditions_row_is_refused(tmp_path):
    from pevpm.profile.store import BlockConditions

    path = tmp_path / "m.db"
    _write(path, np.full((2, 50), 5e-6), conditions=BlockConditions(0.1, 0.5, 2))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE conditions SET cores = 0")
    with pytest.raises(ProfileError, match="conditions"):
        Profile.open(path)
