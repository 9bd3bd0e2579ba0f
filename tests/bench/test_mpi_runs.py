"""Real mpiexec runs: clock recovery, a small benchmark, refusals, Ctrl-C and --resume."""

import json
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from bench_helpers import MPIEXEC, mpi_env, needs_mpiexec, run_mpi

from pevpm.bench.options import CHAIN_MIN_LEAD, CHAIN_MIN_REPS
from pevpm.bench.results import CSV_HEADER, describe
from pevpm.errors import ProfileError
from pevpm.host import usable_cores
from pevpm.profile.builtin import origin_of
from pevpm.profile.store import Profile

pytestmark = [pytest.mark.mpi, needs_mpiexec]

SMALL = ["--tests", "isend,bcast,scattertotal,barrier", "--sizes", "0,1K", "--reps", "20",
         "--resend-limit", "50", "--no-progress"]


@pytest.mark.parametrize("nprocs, method", [(2, "pairwise"), (4, "hierarchical")])
def test_injected_offset_and_drift_are_recovered_within_bound(nprocs, method):
    result = run_mpi(nprocs, "-m", "pevpm.bench.clockcheck", "--method", method,
                     "--resend-limit", "100", "--interval", "0.2s", "--skew-rank",
                     str(nprocs - 1), "--skew-offset", "5ms", "--skew-drift", "1e-4")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["rows"]
    skewed = rows[-1]
    assert skewed["max_probe_error_ns"] <= skewed["error_bound_ns"]
    drift_tolerance = 2 * skewed["error_bound_ns"] / skewed["interval_ns"]
    assert abs(skewed["drift"] - skewed["expected_drift"]) <= drift_tolerance
    for row in rows[:-1]:
        assert abs(row["offset_ns"][0]) <= row["error_bound_ns"]


@pytest.fixture(scope="module")
def small_profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "m.db"
    result = run_mpi(2, "-m", "pevpm", "bench", *SMALL, "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path, result


def test_small_benchmark_writes_every_block(small_profile):
    path, result = small_profile
    assert "7 blocks for 1x2" in result.stdout
    with Profile.open(path) as prof:
        labels = [(k.test, k.variant, k.size, k.nxp) for k in prof.blocks()]
        assert labels == [("barrier", "", 0, "1x2"), ("bcast", "", 0, "1x2"),
                          ("bcast", "", 1024, "1x2"), ("isend", "", 0, "1x2"),
                          ("isend", "", 1024, "1x2"), ("scatter", "total", 0, "1x2"),
                          ("scatter", "total", 1024, "1x2")]
        run = prof.runs()[0]
        assert run.finished and run.hosts and 0 < run.max_sync_error < 1e-3
        # MPI as a compiled program's MPI_Init gives it: no thread-multiple locks.
        assert run.mpi_version.endswith(", MPI_THREAD_FUNNELED")
        one_way = "chain" if usable_cores() >= 2 else "barrier"
        # Chained blocks: at least CHAIN_MIN_REPS timed repetitions, after
        # CHAIN_MIN_LEAD more in the same loop (and --warmup's 10 before); barrier-started
        # blocks: --reps.
        chained = one_way == "chain"
        times = prof.samples("isend", 1024, by_rank=True)
        assert times.shape == (2, CHAIN_MIN_REPS if chained else 20)
        info = prof.block_info(prof.resolve("isend", 1024))
        assert (info["reps"], info["warmup"]) == ((CHAIN_MIN_REPS, 10 + CHAIN_MIN_LEAD)
                                                  if chained else (20, 10))
        assert not info["budget_limited"]
        assert np.all(times > -run.max_sync_error)
        assert prof.summary("bcast", 1024).count == 40
        # The default start rule: one-way tests chained (where each rank has a core),
        # the others after a barrier.
        starts = {k.test: prof.block_info(k)["start_mode"] for k in prof.blocks()}
        assert starts == {"isend": one_way, "bcast": "barrier", "scatter": "barrier",
                          "barrier": "barrier"}
        assert run.plan["start"] == "auto"
        expected = ("barrier (barrier, bcast, scattertotal); chain (isend)" if one_way == "chain"
                    else "barrier (barrier, bcast, isend, scattertotal)")
        assert f"repetitions started: {expected}" in describe(prof).splitlines()
        for key in prof.blocks():                    # the machine's load, for every block
            conditions = prof.block_conditions(key)
            assert conditions.cores == usable_cores()   # the host's, not the pinned rank's
            assert conditions.others >= 0 and conditions.load >= 0
        assert origin_of(prof).cores == usable_cores()


def test_bench_records_the_measured_eager_limit(small_profile):
    """A 1 KiB send completes alone with any MPI library worth the name; the
    limit is then what the machine built from the profile uses."""
    from pevpm.bench.eager import PROBE_LIMIT
    from pevpm.machine.profile_model import machine_from_profile
    from pevpm.profile.builtin import origin_of

    path, _ = small_profile
    with Profile.open(path) as prof:
        eager = origin_of(prof).eager
    assert 1024 <= eager <= PROBE_LIMIT
    assert machine_from_profile(str(path)).eager_limit == eager
    assert machine_from_profile(str(path), eager_limit=0).eager_limit == 0


def test_profile_commands_show_export_and_plot_without_mpi(small_profile, tmp_path):
    path, _ = small_profile
    code = (
        "import sys; from pevpm.cli import main;"
        f"rc = main(['profile', 'show', {str(path)!r}]);"
        f"rc |= main(['profile', 'export-csv', {str(path)!r}, '-o', {str(tmp_path / 'm.csv')!r}]);"
        f"rc |= main(['profile', 'plot', {str(path)!r}, '-o', {str(tmp_path / 'plots')!r}]);"
        "assert 'mpi4py.MPI' not in sys.modules, 'profile commands started MPI';"
        "sys.exit(rc)"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                            env=mpi_env(), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "isend" in result.stdout and "run 1: 1x2" in result.stdout
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0].split(",") == CSV_HEADER and len(lines) == 8
    with Profile.open(path) as prof:
        machine = prof.machine.name
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        ".pevpm-folder",                # says: a plot folder pevpm wrote
        f"{machine}.1x2.barrier.0-0.png",
        *(f"{machine}.1x2.{t}.0-1K.png" for t in ("bcast", "isend", "scattertotal"))]


@pytest.mark.parametrize("nprocs, args, message", [
    (2, ["--sizes", "0,-8"], "negative message size"),
    (2, ["--tests", "isend,pingpong"], "unknown test 'pingpong'"),
    (3, ["--tests", "isend"], "process count must be even (got 3)"),
    (2, ["--tests", "alltoall", "--sizes", "512G"], "MiB of buffers"),
])
def test_bad_options_are_refused_once_before_mpi_work(nprocs, args, message, tmp_path):
    out = tmp_path / "never.db"
    result = run_mpi(nprocs, "-m", "pevpm", "bench", *args, "-o", str(out), timeout=60)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("pevpm: error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def _blocks(path):
    try:
        with Profile.open(path) as prof:
            return len(prof.blocks())
    except ProfileError:
        return 0


def test_sigint_keeps_finished_blocks_and_resume_completes(tmp_path):
    path = tmp_path / "m.db"
    args = ["--tests", "isend,sendrecv", "--sizes", "0-256-2K", "--reps", "400",
            "--resend-limit", "50", "--no-progress", "-o", str(path)]
    proc = subprocess.Popen([str(MPIEXEC), "-n", "2", sys.executable, "-m", "pevpm", "bench",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=mpi_env())
    deadline = time.monotonic() + 60
    while _blocks(path) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    kept = _blocks(path)
    if proc.returncode == 0:
        pytest.skip("the run finished before it could be interrupted")
    assert proc.returncode != 0
    assert "interrupted" in stderr and "--resume" in stderr
    assert 2 <= kept < 18
    with Profile.open(path) as prof:
        assert prof.runs()[0].finished is None
    result = run_mpi(2, "-m", "pevpm", "bench", "--resume", "--no-progress", "-o", str(path))
    assert result.returncode == 0, result.stderr
    with Profile.open(path) as prof:
        assert len(prof.blocks()) == 18
        assert len(prof.runs()) == 1 and prof.runs()[0].finished


def test_timed_starts_and_tree_sync(tmp_path):
    path = tmp_path / "t.db"
    result = run_mpi(2, "-m", "pevpm", "bench", "--tests", "sendrecv", "--sizes", "64",
                     "--reps", "30", "--start", "time", "--spacing", "200us", "--sync",
                     "hierarchical", "--resend-limit", "50", "--no-progress", "-o", str(path))
    assert result.returncode == 0, result.stderr
    with Profile.open(path) as prof:
        key = prof.resolve("sendrecv", 64)
        assert prof.block_info(key)["start_mode"] == "time"
        assert prof.runs()[0].sync_method == "hierarchical"
        assert prof.samples(key).shape == (60,)


def test_placements_inside_one_launch_and_resume_across_them(tmp_path):
    path = tmp_path / "p.db"
    args = ["--tests", "send,isend", "--sizes", "0,1K", "--reps", "20", "--resend-limit", "50",
            "--placements", "1x2,1x4", "--no-progress", "-o", str(path)]
    result = run_mpi(4, "-m", "pevpm", "bench", *args)
    assert result.returncode == 0, result.stderr
    assert "4 blocks for 1x2" in result.stdout and "4 blocks for 1x4" in result.stdout
    with Profile.open(path) as prof:
        assert [(r.n, r.p, len(r.hosts)) for r in prof.runs()] == [(1, 2, 2), (1, 4, 4)]
        pair = CHAIN_MIN_REPS if usable_cores() >= 2 else 20      # chained where it can be
        four = CHAIN_MIN_REPS if usable_cores() >= 4 else 20
        assert prof.samples("send", 1024, nxp="1x2", by_rank=True).shape == (2, pair)
        assert prof.samples("send", 1024, nxp="1x4", by_rank=True).shape == (4, four)
        assert np.all(prof.samples("send", 0, nxp="1x2") > 0)
        launches = {run.plan["launch"] for run in prof.runs()}
    assert len(launches) == 1 and launches != {""}
    # Lose the last 1x4 block and the run's end, as an interrupt would; resume redoes only it.
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET finished=NULL WHERE n=1 AND p=4")
        block = conn.execute("SELECT id FROM blocks WHERE test='isend' AND size=1024 AND p=4"
                             ).fetchone()[0]
        for table in ("raw_times", "outliers", "histograms", "summaries"):
            conn.execute(f"DELETE FROM {table} WHERE block_id=?", (block,))
        conn.execute("DELETE FROM blocks WHERE id=?", (block,))
    result = run_mpi(4, "-m", "pevpm", "bench", "--resume", "--no-progress", "-o", str(path))
    assert result.returncode == 0, result.stderr
    with Profile.open(path) as prof:
        assert len(prof.runs()) == 2 and all(run.finished for run in prof.runs())
        assert len(prof.blocks(nxp="1x4")) == 4 and len(prof.blocks(nxp="1x2")) == 4


@pytest.mark.skipif(usable_cores() < 2, reason="needs a core per rank at 1x2")
def test_auto_start_chains_only_where_ranks_have_cores_of_their_own(tmp_path):
    """4 ranks: 1x2 fits on 2 cores and is chained; 1x4 on fewer than 4 shares cores
    and keeps barrier starts."""
    path = tmp_path / "a.db"
    result = run_mpi(4, "-m", "pevpm", "bench", "--tests", "send,bcast", "--sizes", "0",
                     "--reps", "20", "--resend-limit", "50", "--placements", "1x2,1x4",
                     "--no-stability-repeat", "--no-progress", "-o", str(path))
    assert result.returncode == 0, result.stderr
    with Profile.open(path) as prof:
        starts = {(k.test, k.nxp): prof.block_info(k)["start_mode"] for k in prof.blocks()}
    shared = "barrier" if usable_cores() < 4 else "chain"
    assert starts == {("send", "1x2"): "chain", ("bcast", "1x2"): "barrier",
                      ("send", "1x4"): shared, ("bcast", "1x4"): "barrier"}


def test_placement_larger_than_the_launch_is_refused(tmp_path):
    out = tmp_path / "never.db"
    result = run_mpi(2, "-m", "pevpm", "bench", "--tests", "isend", "--placements", "1x4",
                     "--no-progress", "-o", str(out), timeout=60)
    assert result.returncode != 0
    assert "placement 1x4 does not fit in this launch's 1x2" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("start, recorded", [
    ("chain", "chain"), ("barrier", "barrier"),
    ("auto", "chain" if usable_cores() >= 2 else "barrier")])
def test_compute_gap_and_chained_starts_are_recorded(tmp_path, start, recorded):
    path = tmp_path / "g.db"
    result = run_mpi(2, "-m", "pevpm", "bench", "--tests", "send", "--sizes", "0,1K",
                     "--reps", "40", "--start", start, "--gap", "20us", "--resend-limit", "50",
                     "--no-progress", "-o", str(path))
    assert result.returncode == 0, result.stderr
    with Profile.open(path) as prof:
        key = prof.resolve("send", 1024)
        assert prof.block_info(key)["start_mode"] == f"{recorded}+gap 20us"
        times = prof.samples(key)
        reps = CHAIN_MIN_REPS if recorded == "chain" else 40
        assert times.shape == (2 * reps,) and np.all(times > -prof.runs()[0].max_sync_error)


def test_progress_into_a_log_file_has_no_carriage_return_frames(tmp_path):
    """``mpiexec -n 2 pevpm bench --quick -o p.db > log 2>&1``: plain lines only."""
    log = tmp_path / "log"
    with open(log, "w") as out:
        result = subprocess.run(
            [str(MPIEXEC), "-n", "2", sys.executable, "-m", "pevpm", "bench", "--quick",
             "--tests", "isend,barrier", "-o", str(tmp_path / "p.db")],
            stdout=out, stderr=subprocess.STDOUT, timeout=120, env=mpi_env(), check=False)
    text = log.read_text()
    assert result.returncode == 0, text
    assert "blocks for 1x2" in text
    assert "\r" not in text and "\x1b[" not in text


def test_bench_refuses_to_append_to_a_damaged_profile(small_profile, tmp_path):
    import shutil
    import sqlite3

    damaged = tmp_path / "damaged.db"
    shutil.copyfile(small_profile[0], damaged)
    with sqlite3.connect(damaged) as conn:
        conn.execute("UPDATE blocks SET size = -4 WHERE id = 1")
    before = damaged.read_bytes()
    result = run_mpi(2, "-m", "pevpm", "bench", *SMALL, "-o", str(damaged))
    assert result.returncode == 2
    assert f"{damaged}: damaged profile: blocks row 1: size is -4, below 0" in result.stderr
    assert "Traceback" not in result.stderr
    assert damaged.read_bytes() == before
