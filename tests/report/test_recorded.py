"""A recorded trace beside a model's prediction: the Perfetto file and the report section."""

from pathlib import Path

import pytest

from pevpm.machine.presets import parse_machine
from pevpm.model.loader import load_model
from pevpm.report.html import write_report
from pevpm.report.recorded import comparison_section, rank_comparisons
from pevpm.report.side_by_side import (
    PREDICTED_PID,
    RECORDED_PID,
    collective_of,
    side_by_side_document,
)
from pevpm.trace.otf2.read import read_archive
from pevpm.vm.kernel.fastengine import simulate

US = 1e-6


@pytest.fixture
def ping(ping_archive, ping_model):
    """The ping trace and the model's run on a machine where every message takes 0.1 ms."""
    trace = read_archive(ping_archive)
    run = simulate(load_model(str(ping_model)), 2, parse_machine("constant:latency=1e-4"),
                   trace=True)
    return trace, run


def slices(doc, pid):
    return sorted((e["tid"], e["name"], round(e["ts"], 6), round(e["dur"], 6))
                  for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == pid)


def test_every_recorded_call_is_a_slice_from_the_first_program_start(ping, ping_calls):
    doc = side_by_side_document(*ping, "ping", "ping_model.py on constant")
    origin = ping_calls[0][0][2]                          # rank 0 leaves MPI_Init first
    recorded = [s for s in slices(doc, RECORDED_PID) if s[1] != "computation"]
    assert recorded == sorted((rank, name, start - origin, end - start)
                              for rank, calls in ping_calls.items()
                              for name, start, end in calls[1:-1])
    gaps = [s for s in slices(doc, RECORDED_PID) if s[1] == "computation"]
    assert gaps[0] == (0, "computation", 0, 2000)         # rank 0 computes before its send
    assert gaps[3] == (1, "computation", 200, 300)        # rank 1 started 0.2 ms later


def test_the_predicted_group_holds_the_models_run_with_exact_times(ping):
    doc = side_by_side_document(*ping, "ping", "ping_model.py on constant")
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["name"] == "process_name"}
    assert names == {RECORDED_PID: "recorded: ping",
                     PREDICTED_PID: "predicted: ping_model.py on constant"}
    assert slices(doc, PREDICTED_PID) == [
        (0, "MPI_Barrier", 2100, 100), (0, "MPI_Send", 2000, 100), (0, "Serial", 0, 2000),
        (1, "MPI_Barrier", 2100, 100), (1, "MPI_Recv", 0, 2000), (1, "MPI_Recv", 2000, 100)]
    barrier = next(e for e in doc["traceEvents"]
                   if e["pid"] == PREDICTED_PID and e["name"] == "MPI_Barrier")
    assert barrier["args"]["step"] == "MPI_Sendrecv"      # the algorithm's step, kept
    arrows = [e for e in doc["traceEvents"] if e["ph"] in "sf"]
    # the message, and the barrier's exchange: one message each way
    assert {e["pid"] for e in arrows} == {PREDICTED_PID} and len(arrows) == 2 * 3


def test_collective_steps_are_found_inside_subroutines_too():
    where = "m: statement 2 (MPI_Allreduce) in solve in outer: MPI_Sendrecv"
    assert collective_of({"name": "MPI_Sendrecv", "args": {"where": where}}) == "MPI_Allreduce"
    assert collective_of({"name": "MPI_Send", "args": {"where": "m.c:4:2"}}) is None
    assert collective_of({"name": "Serial", "args": {}}) is None


def test_rank_comparisons_split_each_rank_into_mpi_and_compute(ping):
    zero, one = rank_comparisons(*ping)
    assert zero.rank == 0 and one.rank == 1
    # rank 0: program from 1.0 ms to 5.0 ms, in MPI_Send 0.5 ms and MPI_Barrier 0.2 ms
    assert (zero.recorded, zero.recorded_mpi, zero.recorded_compute) == pytest.approx(
        (4e-3, 0.7e-3, 3.3e-3))
    # rank 1: from 1.2 ms to 4.8 ms, in MPI_Recv 2.1 ms and MPI_Barrier 0.1 ms
    assert (one.recorded, one.recorded_mpi, one.recorded_compute) == pytest.approx(
        (3.8e-3, 2.2e-3, 1.4e-3))
    assert (zero.predicted, zero.predicted_mpi, zero.predicted_compute) == pytest.approx(
        (2.2e-3, 0.2e-3, 2e-3))
    assert (one.predicted, one.predicted_mpi, one.predicted_compute) == pytest.approx(
        (2.2e-3, 2.2e-3, 0.0))


def test_the_report_section_names_the_model_links_the_file_and_has_a_row_per_rank(
        tmp_path, ping, sample_results):
    section = comparison_section(*ping, source="run", predicted_by="the model ping.py",
                                 machine="constant:latency=1e-4", perfetto="both.json")
    assert section["recorded_seconds"] == pytest.approx(4e-3)
    assert section["predicted_seconds"] == pytest.approx(2.2e-3)
    path = write_report({**sample_results, "recorded": section}, str(tmp_path))
    page = Path(path).read_text(encoding="utf-8")
    assert "<h2>Recorded vs predicted</h2>" in page
    assert "the model ping.py" in page and "<a href='both.json'>" in page
    assert "recorded 4.000 ms, predicted 2.200 ms (-45.0%)" in page
    assert ("<tr><td>1</td><td>3.800 ms</td><td>2.200 ms</td><td>2.200 ms</td>"
            "<td>2.200 ms</td><td>1.400 ms</td><td>0.0 µs</td></tr>") in page
    assert "Measured vs predicted" in page                # the demo's sections stay


def test_a_report_without_a_recorded_run_has_no_such_section(tmp_path, sample_results):
    page = Path(write_report(sample_results, str(tmp_path))).read_text(encoding="utf-8")
    assert "Recorded vs predicted" not in page
