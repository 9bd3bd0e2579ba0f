"""``pevpm calibrate --from-trace``: the computation between a traced run's MPI calls,
named by the calls around it (issue 29)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pevpm.calibrate.from_trace import (
    NO_CPU_NOTE,
    calibration_from_trace,
    call_label,
    trace_segments,
)
from pevpm.calibrate.parameters import load_parameters
from pevpm.calibrate.regions import build_flags
from pevpm.cli import main
from pevpm.trace.events import Call, Collective, Posted, Recv, Send, Trace

BIN = Path(sys.executable).parent
HEAT = Path(__file__).resolve().parents[2] / "examples" / "heat" / "heat.c"


def _rank(start: float, cpu: float | None = None) -> tuple[Call, ...]:
    """Init, then two iterations of Irecv / Send / Wait / Allreduce with 1 ms and
    2 ms of computation, then Finalize; times from ``start``."""
    t, calls = start + 1.0, [Call("MPI_Init", start, start + 1.0)]
    for _ in range(2):
        calls.append(Call("MPI_Irecv", t, t + 1e-6, (Posted(1),), cpu=cpu))
        t += 1e-6
        calls.append(Call("MPI_Send", t + 1e-3, t + 1.1e-3, (Send(1, 4, 8),), cpu=cpu))
        t += 1.1e-3
        calls.append(Call("MPI_Wait", t, t + 1e-5, (Recv(1, 5, 8, request=1),), cpu=cpu))
        t += 1e-5
        calls.append(Call("MPI_Allreduce", t + 2e-3, t + 2.1e-3,
                          (Collective("ALLREDUCE", (0, 1), None, 8, 8),), cpu=cpu))
        t += 2.1e-3
    calls.append(Call("MPI_Finalize", t + 0.5, t + 0.6, cpu=cpu))
    return tuple(calls)


def test_each_gap_is_named_by_the_calls_around_it_and_pooled_over_ranks():
    segments = trace_segments(Trace((_rank(0.0), _rank(10.0))))
    assert list(segments) == ["Init_to_Irecv", "Irecv_to_Send_tag4", "Send_tag4_to_Wait_tag5",
                              "Wait_tag5_to_Allreduce", "Allreduce_to_Irecv",
                              "Allreduce_to_Finalize"]
    assert [len(segments[name]) for name in segments] == [2, 4, 4, 4, 2, 2]
    assert segments["Irecv_to_Send_tag4"] == pytest.approx([1e-3] * 4)
    assert segments["Wait_tag5_to_Allreduce"] == pytest.approx([2e-3] * 4)
    assert segments["Allreduce_to_Finalize"] == pytest.approx([0.5, 0.5])


def test_a_label_keeps_a_shared_tag_only():
    mixed = Call("MPI_Waitall", 0, 0, (Recv(1, 1, 8), Recv(2, 2, 8)))
    negative = Call("MPI_Recv", 0, 0, (Recv(1, -3, 8),))
    odd = Call("MPI_File write", 0, 0)
    assert [call_label(c) for c in (mixed, negative, odd)] == ["Waitall", "Recv_tagm3",
                                                               "File_write"]


def test_tags_that_change_every_call_are_left_out_of_the_names(tmp_path, monkeypatch):
    from pevpm.calibrate import from_trace

    calls = [Call("MPI_Init", 0.0, 1.0)]
    calls += [Call("MPI_Send", 1.0 + i, 1.5 + i, (Send(1, i, 8),)) for i in range(70)]
    monkeypatch.setattr(from_trace, "read_archive", lambda path: Trace((tuple(calls),)))
    calibration, notes = calibration_from_trace(tmp_path)
    assert sorted(calibration.regions) == ["Init_to_Send", "Send_to_Send"]
    assert calibration.regions["Send_to_Send"].calls == 69
    assert notes == [("more than 64 segments named with their calls' tags (tags that change "
                      "from call to call): named without tags"), NO_CPU_NOTE]


def test_the_calibration_says_when_the_ranks_lost_their_cores(tmp_path, monkeypatch):
    from pevpm.calibrate import from_trace

    monkeypatch.setattr(from_trace, "read_archive", lambda path: busy)
    busy = Trace((_rank(0.0, cpu=1e-4), _rank(0.0, cpu=1e-4)), cores=1)
    calibration, notes = calibration_from_trace(tmp_path)
    assert notes == []
    assert calibration.disturbed == ("running 2 ranks on 1 cores; busy: the ranks had a core "
                                     "for 0% of their computation time, where sharing 1 cores "
                                     "among themselves gives 50%")
    assert calibration.parameters["t_Wait_tag5_to_Allreduce"] == pytest.approx(2e-3)
    assert calibration.parameters["t_Wait_tag5_to_Allreduce_sd"] == pytest.approx(0, abs=1e-9)
    # each rank had its core half the time: what two ranks on one core get, no more
    shared = Trace((_rank(0.0, cpu=0.0316), _rank(0.0, cpu=0.0316)), cores=1)
    monkeypatch.setattr(from_trace, "read_archive", lambda path: shared)
    assert calibration_from_trace(tmp_path)[0].disturbed == "running 2 ranks on 1 cores"
    quiet = Trace((_rank(0.0), _rank(0.0)), cores=2)          # no CPU times: a note
    monkeypatch.setattr(from_trace, "read_archive", lambda path: quiet)
    calibration, notes = calibration_from_trace(tmp_path)
    assert calibration.disturbed is None and notes == [NO_CPU_NOTE]


def _traced_heat(folder: Path) -> Path:
    """examples/heat/heat.c, built with the wheel's mpicc, traced on 2 ranks."""
    done = subprocess.run([str(BIN / "mpicc"), "-O2", str(HEAT), build_flags("cflags"),
                           build_flags("libs"), "-lm", "-o", str(folder / "heat")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    archive = folder / "run"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / "pevpm"), "trace", "-o", str(archive), "--",
                           str(BIN / "mpiexec"), "-n", "2", str(folder / "heat"), "--points",
                           "2000", "--iterations", "20"],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return archive


@pytest.mark.mpi
@pytest.mark.skipif(not (BIN / "mpicc").exists(), reason="needs the mpich wheel's mpicc")
def test_a_traced_compiled_run_calibrates_and_a_damaged_copy_is_one_error(tmp_path, capsys):
    archive = _traced_heat(tmp_path)
    out = tmp_path / "heat.json"
    assert main(["calibrate", "--from-trace", str(archive), "-o", str(out)]) == 0
    regions = json.loads(out.read_text())["regions"]
    assert {name: r["calls"] for name, r in regions.items()} == {
        "Init_to_Barrier": 2, "Barrier_to_Sendrecv_tag0": 2,
        "Sendrecv_tag0_to_Sendrecv_tag1": 40, "Sendrecv_tag1_to_Allreduce": 40,
        "Allreduce_to_Sendrecv_tag0": 38, "Allreduce_to_Finalize": 2}
    # the update and change regions of 2,000 cells lie between the second Sendrecv
    # and the Allreduce: more work than the nothing between the two Sendrecvs
    assert regions["Sendrecv_tag1_to_Allreduce"]["median"] > \
        regions["Sendrecv_tag0_to_Sendrecv_tag1"]["median"]
    parameters = load_parameters(out, "none")
    assert parameters["t_Sendrecv_tag1_to_Allreduce_sd"] == 0.0
    printed = capsys.readouterr()
    assert "Sendrecv_tag1_to_Allreduce" in printed.out
    assert printed.err == f"pevpm calibrate: note: {NO_CPU_NOTE}\n"     # 2 ranks, 2+ cores

    damaged = tmp_path / "damaged"
    shutil.copytree(archive, damaged)
    events = min((damaged / "traces").glob("*.evt"))
    events.write_bytes(events.read_bytes()[: events.stat().st_size // 2])
    done = subprocess.run([str(BIN / "pevpm"), "calibrate", "--from-trace", str(damaged), "-o",
                           str(tmp_path / "damaged.json")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"pevpm: error: {damaged / 'traces.otf2'}: not a readable "
                                  "OTF2 archive")
    assert not (tmp_path / "damaged.json").exists()
