"""No run leaves the compiled core without saying so (issue 25).

Every run :func:`pevpm.vm.kernel.fastengine.simulate` gives to the pure-Python
engine carries a note naming the engine and why; a Monte Carlo prediction
says it once, with how many of its runs it concerns, and ``pevpm predict``
prints it as a ``note:`` line.  Models the core runs whole carry no note.
"""

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.strategies.montecarlo import predict
from engine_models import check_wide_ring

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")

RING_LEFT = "(procnum + numprocs - 1) % numprocs"
RING_RIGHT = "(procnum + 1) % numprocs"

MPI_TEST_MODEL = f"""\
from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    b.irecv(8, source="{RING_LEFT}", request="r")
    b.send(8, dest="{RING_RIGHT}")
    b.test("r")
    b.wait("r")
    return b
"""


def _mpi_test_model():
    b = ModelBuilder()
    b.irecv(8, source=RING_LEFT, request="r")
    b.send(8, dest=RING_RIGHT)
    b.test("r")
    b.wait("r")
    return b.build()


def test_a_model_with_mpi_test_runs_on_the_reference_engine_and_says_so():
    run = fastengine.simulate(_mpi_test_model(), 4, Machine(Constant(0.25)))
    assert run.engine_note == "the compiled core does not run MPI_Test"
    p = predict(_mpi_test_model(), 4, Machine(Constant(0.25)), runs=3, workers=1)
    note = "the pure-Python engine ran all 3 runs: the compiled core does not run MPI_Test"
    assert p.engine_notes == (note,)
    assert p.to_dict(per_rank=False)["engine_notes"] == list(p.engine_notes)


def test_predict_prints_the_note_once_per_count(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(MPI_TEST_MODEL)
    code = main(["predict", str(path), "-n", "2,4", "--runs", "3", "--workers", "1",
                 "--machine", "constant:latency=1ms"])
    err = capsys.readouterr().err
    assert code == 0, err
    notes = [line for line in err.splitlines() if "pure-Python engine" in line]
    assert notes == [f"pevpm predict: note: {n} ranks: the pure-Python engine ran all 3 runs: "
                     "the compiled core does not run MPI_Test" for n in (2, 4)]


def test_a_run_left_with_requests_outstanding_is_rerun_on_the_reference_and_noted():
    b = ModelBuilder()
    b.isend(8, dest=RING_RIGHT, request="never_waited")
    b.recv(8, source=RING_LEFT)
    run = fastengine.simulate(b.build(), 4, Machine(Constant(0.25)))
    assert run.engine_note == ("the compiled core does not handle a run that ends with "
                               "requests outstanding (the pure-Python engine lists them)")
    assert len(run.outstanding) == 4


@pytest.mark.parametrize("n", [2, 5, 8])
def test_collectives_timed_whole_run_on_the_core_as_on_the_reference(n):
    b = ModelBuilder()
    with b.loop(4):
        b.serial("gamma(1e-3, 2e-4)")
        b.collective("MPI_Barrier")
        b.collective("MPI_Allreduce", 8)
        b.collective("MPI_Bcast", 1024, root=1)
    machine = Machine(Constant(1e-3), collectives=CollectiveConfig(hardware=True))
    ref_rng, core_rng = np.random.default_rng(n), np.random.default_rng(n)
    run = fastengine.simulate(b.build(), n, machine, rng=core_rng)
    reference = engine.simulate(b.build(), n, machine, rng=ref_rng)
    assert run.engine_note is None
    assert (run.makespan, run.ranks, run.critical_path) == (
        reference.makespan, reference.ranks, reference.critical_path)
    assert [(c.where, c.occurrence, list(c.completion)) for c in run.collectives] == [
        (c.where, c.occurrence, list(c.completion)) for c in reference.collectives]
    assert core_rng.bit_generator.state == ref_rng.bit_generator.state


def test_a_run_that_ends_in_an_error_reports_the_error_not_a_note():
    b = ModelBuilder()
    b.send(8, dest="1 - procnum")
    b.send(8, dest="1 - procnum")
    b.recv(8, source="1 - procnum")
    with pytest.raises(Exception, match="deadlock"):
        fastengine.simulate(b.build(), 2, Machine(Constant(1.0)))


def cg_benchmark():
    """benchmarks/engine_cg_calibrated.py as a module (its model is the one timed)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "engine_cg_calibrated.py"
    spec = importlib.util.spec_from_file_location("engine_cg_calibrated", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_calibrated_cg_model_runs_whole_on_the_core_on_a_measured_profile():
    p = predict(cg_benchmark().cg_model(3), 8, parse_machine("default"), runs=2, workers=1,
                exact=True)
    assert p.engine_notes == ()


def test_the_core_runs_more_ranks_than_32_bit_keys_hold():
    """Beyond 46,340 ranks the receive buckets' keys number the tags (42-bit
    rank part): a ring of tagged exchanges and wildcard receives stays in the
    core and times each rank as the reference does on a small ring."""
    b = ModelBuilder()
    b.sendrecv(8, dest=RING_RIGHT, source=RING_LEFT, tag=5)
    b.irecv(8, source=RING_LEFT, tag=f"({RING_LEFT}) % 3", request="a")
    b.irecv(8, source="MPI_ANY_SOURCE", tag=7, request="b")
    b.isend(8, dest=RING_RIGHT, tag="procnum % 3", request="c")
    b.isend(8, dest=RING_RIGHT, tag=7, request="d")
    b.waitall()
    check_wide_ring(b.build(), Machine(Constant(0.25)), 6, 3)


def test_a_prediction_counts_the_runs_each_reason_concerns():
    from pevpm.vm.strategies.prediction import PredictionAccumulator, RunSummary

    run = fastengine.simulate(_mpi_test_model(), 2, Machine(Constant(0.25)))
    acc = PredictionAccumulator(2)
    for note in ("x", None, "x"):
        acc.add(replace(RunSummary.of(run), engine_note=note))
    assert acc.build().engine_notes == ("the pure-Python engine ran 2 of 3 runs: x",)


RING_MODEL = f"""\
from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    b.sendrecv(8, dest="{RING_RIGHT}", source="{RING_LEFT}")
    return b
"""


def test_predict_notes_the_engine_of_its_trace_and_explained_runs(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(RING_MODEL)
    code = main(["predict", str(path), "-n", "4", "--runs", "2", "--workers", "1",
                 "--machine", "constant:latency=1ms", "--trace", str(tmp_path / "t.json"),
                 "--explain"])
    err = capsys.readouterr().err
    assert code == 0, err
    notes = [line for line in err.splitlines() if "engine ran" in line]
    assert notes == [
        "pevpm predict: note: the trace of run 0 on 4 ranks: the pure-Python engine ran "
        "it: the compiled core does not make time slices (a trace)",
        "pevpm predict: note: 4 ranks: the pure-Python engine ran the explained run: the "
        "compiled core does not tally the profile blocks and links a run uses"]


#: The only modules that run the pure-Python engine themselves: the adapter
#: (which notes why on the result) and the explained run (whose note
#: ``pevpm predict --explain`` prints, above).
REFERENCE_CALLERS = {"src/pevpm/vm/kernel/fastengine.py", "src/pevpm/vm/strategies/explain.py"}


def test_every_other_run_in_the_library_and_benchmarks_goes_through_the_adapter():
    root = Path(__file__).resolve().parents[2]
    callers = set()
    for path in [*root.glob("src/pevpm/**/*.py"), *root.glob("benchmarks/**/*.py")]:
        text = path.read_text()
        if ("engine.simulate(" in text.replace("fastengine.simulate(", "")
                or "from pevpm.vm.kernel.engine import simulate\n" in text):
            callers.add(str(path.relative_to(root)))
    assert callers == REFERENCE_CALLERS
