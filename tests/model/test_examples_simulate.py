"""The annotated examples on the virtual machine.  The Jacobi model on a
constant-latency machine gives the makespan a hand calculation gives.

Every message takes L seconds, blocking sends are rendezvous (they finish
with their receive), and each iteration computes T = t_perseus / numprocs.
With 2 ranks an iteration is send-then-reply: 2L + T.  With 3 or 4 ranks
rank 1 first takes the row from rank 2 (L), then rank 0's row (already
there), replies to rank 0 (L) and passes its row up to rank 2 (L), and
that chain repeats with the same phase every iteration: 3L + T.
"""

from pathlib import Path

import numpy as np
import pytest

from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.loader import load_model
from pevpm.vm.kernel.engine import simulate

JACOBI = Path(__file__).resolve().parents[2] / "examples" / "jacobi" / "jacobi.c"
L = 1e-4
ITERATIONS = 10
T_PERSEUS_MS = 3.24


@pytest.mark.parametrize("numprocs, per_iteration_latencies", [(2, 2), (3, 3), (4, 3)])
def test_jacobi_makespan_matches_hand_calculation(numprocs, per_iteration_latencies):
    model = load_model(JACOBI, params={"iterations": ITERATIONS}, processor="perseus")
    run = simulate(model, numprocs, Machine(Constant(L)), rng=np.random.default_rng(0))
    serial = T_PERSEUS_MS * 1e-3 / numprocs
    assert run.makespan == pytest.approx(ITERATIONS * (per_iteration_latencies * L + serial),
                                         rel=1e-12)


def test_processor_choice_selects_its_serial_times():
    model = load_model(JACOBI, params={"iterations": ITERATIONS}, processor="orion")
    run = simulate(model, 2, Machine(Constant(0.0)))
    assert run.makespan == pytest.approx(ITERATIONS * 5.70e-3 / 2, rel=1e-12)


EXAMPLES = JACOBI.parents[1]


def test_bag_of_tasks_model_runs_its_jobs_in_parallel():
    """With free communication each of the numprocs-1 workers computes
    njobs / (numprocs-1) jobs of t_job = 25 ms, side by side."""
    model = load_model(EXAMPLES / "bag_of_tasks" / "bag_of_tasks.c", params={"njobs": 20})
    run = simulate(model, 3, Machine(Constant(0.0)))
    assert run.makespan == pytest.approx(10 * 25e-3, rel=1e-12)


def test_fft_model_splits_its_serial_time_around_the_alltoall():
    model = load_model(EXAMPLES / "fft2d" / "fft2d.c", params={"iterations": 2},
                       processor="sc")
    run = simulate(model, 4, Machine(Constant(0.0)))
    assert run.makespan == pytest.approx(2 * 13.3e-3 / 4, rel=1e-12)
