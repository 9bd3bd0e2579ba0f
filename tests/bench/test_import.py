"""pevpm profile import: OSU 5.3 and IMB 2021.11 output (produced on the development
machine by building both from source with the pip MPICH's mpicc and running them under
mpiexec -n 2, see docs/mpibench.md) into profiles that predict uses."""

import statistics
from pathlib import Path

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.kernels import blocking_pingpong
from pevpm.profile.imported import SAMPLES, parse_text, stated_shape
from pevpm.profile.store import Profile
from pevpm.vm.kernel.engine import simulate

DATA = Path(__file__).parent / "data"
UP_TO_64K = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768,
             65536]


def _import(tmp_path, *names: str, extra=()) -> Path:
    out = tmp_path / "imported.db"
    assert main(["profile", "import", *(str(DATA / n) for n in names), "-o", str(out),
                 *extra]) == 0
    return out


def _reported(name: str) -> dict[int, float]:
    rows = parse_text((DATA / name).read_text(), name).rows
    return {row.size: row.mean for row in rows}


def test_osu_latency_becomes_send_and_isend_blocks(tmp_path, capsys):
    path = _import(tmp_path, "osu_latency.txt")
    err = capsys.readouterr().err
    assert "shifted exponential" in err and "assumed 2 (give --procs)" in err
    reported = _reported("osu_latency.txt")
    with Profile.open(path) as prof:
        assert sorted({(k.test, k.nxp) for k in prof.blocks()}) == [("isend", "1x2"),
                                                                    ("send", "1x2")]
        assert [k.size for k in prof.blocks(test="send")] == UP_TO_64K
        run = prof.runs()[0]
        assert run.binding == "c" and "OSU 5.3" in run.mpi_library
        assert "shifted exponential" in prof.metadata["imported"]
        for size, mean in reported.items():
            summary = prof.summary("send", size)
            assert summary.count == SAMPLES
            assert summary.mean == pytest.approx(mean, rel=1e-9)
            # no minimum reported: the shape starts at 90% of the mean
            assert 0.9 * mean <= summary.min == pytest.approx(0.9 * mean, rel=0.01)


def test_osu_collectives_keep_their_minimum_and_per_process_sizes(tmp_path):
    path = _import(tmp_path, "osu_allreduce.txt", "osu_gather.txt", "osu_bcast.txt",
                   "osu_barrier.txt", extra=["--procs", "2"])
    rows = {row.size: row for row in parse_text((DATA / "osu_allreduce.txt").read_text(),
                                                 "a").rows}
    with Profile.open(path) as prof:
        tests = {(k.test, k.variant) for k in prof.blocks()}
        assert tests == {("allreduce", ""), ("gather", "each"), ("bcast", ""), ("barrier", "")}
        for size, row in rows.items():
            summary = prof.summary("allreduce", size)
            assert summary.mean == pytest.approx(row.mean, rel=1e-9)
            assert row.minimum <= summary.min == pytest.approx(row.minimum, rel=0.01)
        assert prof.summary("barrier", 0).mean == pytest.approx(1.03e-6)


def test_osu_bandwidth_is_time_per_message(tmp_path):
    path = _import(tmp_path, "osu_bw.txt")
    with Profile.open(path) as prof:
        summary = prof.summary("bw", 65536)
    bandwidth = next(float(line.split()[1]) for line in (DATA / "osu_bw.txt").read_text()
                     .splitlines() if line.startswith("65536 "))
    assert summary.mean == pytest.approx(65536 / (bandwidth * 1e6), rel=1e-9)


def test_imb_sections_become_blocks(tmp_path, capsys):
    path = _import(tmp_path, "imb_mpi1.txt")
    assert "assumed 2" not in capsys.readouterr().err       # IMB states #processes
    with Profile.open(path) as prof:
        tests = {(k.test, k.variant, k.nxp) for k in prof.blocks()}
        assert {("send", "", "1x2"), ("isend", "", "1x2"), ("isendduplex", "", "1x2"),
                ("sendrecv", "", "1x2"), ("exchange", "", "1x2"), ("allreduce", "", "1x2"),
                ("bcast", "", "1x2"), ("barrier", "", "1x2"),
                ("alltoall", "each", "1x2")} <= tests
        assert prof.summary("send", 0).mean == pytest.approx(1.14e-6)      # PingPong t[usec]
        sendrecv = prof.summary("sendrecv", 1024)                          # t_min/t_avg
        assert (sendrecv.min, sendrecv.mean) == (pytest.approx(1.94e-6), pytest.approx(1.94e-6))


@pytest.mark.parametrize("size", [0, 1024, 16384, 65536])
def test_a_pingpong_predicted_from_osu_latency_matches_the_file(tmp_path, size):
    """The blocking ping-pong osu_latency times, predicted from its own imported output:
    half the mean round trip of 3 runs of 200 iterations (seeds 0-2) within 10%."""
    path = _import(tmp_path, "osu_latency.txt")
    machine = machine_from_profile(str(path))
    assert any("imported profile" in note for note in machine.comm.notes)
    spans = [simulate(blocking_pingpong(size, 200), 2, machine,
                      rng=np.random.default_rng(seed)).makespan for seed in range(3)]
    half_round_trip = statistics.fmean(spans) / 200 / 2
    assert half_round_trip == pytest.approx(_reported("osu_latency.txt")[size], rel=0.10)


@pytest.mark.parametrize("text, line, message", [
    ("size,latency\n0,1.2\n", 1, "not OSU micro-benchmark or Intel MPI Benchmarks output"),
    ("\n# OSU MPI Latency Test v7.4\n# Size  Latency (us)\n0  0.7\n8  abc\n", 5,
     "expected 2 non-negative numbers, found '8  abc'"),
    ("# OSU MPI Put Latency Test v5.3\n# Size  Latency (us)\n0 1\n", 1, "no profile counterpart"),
    ("# OSU MPI Latency Test v5.3\n# Size  Latency (us)\n", 2, "no results"),
])
def test_bad_or_foreign_files_are_one_error_with_file_and_line(tmp_path, capsys, text, line,
                                                               message):
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    assert main(["profile", "import", str(bad), "-o", str(tmp_path / "x.db")]) != 0
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith(f"pevpm: error: {bad}:{line}: ")
    assert message in errors[0] and "Traceback" not in errors[0]


def test_the_stated_shape_keeps_the_mean_exactly():
    times = stated_shape(3e-6, 2e-6)
    assert times.size == SAMPLES and times.mean() == pytest.approx(3e-6, rel=1e-12)
    assert times.min() >= 2e-6 and np.all(np.diff(times) >= 0)
