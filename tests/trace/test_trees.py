"""Trees of point-to-point messages in traces (pevpm.trace.extract.trees): recognised at
the traced counts, written as a loop over log2(numprocs) steps, and then
right at counts never traced (powers of two and not)."""

import os
import subprocess
import sys

import pytest
from conftest import MPIEXEC, PROGRAMS, SRC

from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.loader import load_model
from pevpm.trace.events import Call, Recv, Send, Trace
from pevpm.trace.extract.extract import extract, trial_run
from pevpm.trace.extract.trees import TEMPLATES
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.replay.replay import trace_model
from pevpm.vm.kernel import fastengine

GAP = 1e-4          # computation between two calls
SIZES = (8, 40)     # mpi4py's way: the length, then the pickle


def tree_calls(template, numprocs: int, rank: int, t: float) -> tuple[list[Call], float]:
    """The rank's messages of ``template``, two per step, back to back from ``t``."""
    calls = []
    for action, partner in template.steps(numprocs, rank):
        for size in SIZES:
            events = {"send": (Send(partner, 3, size),), "recv": (Recv(partner, 3, size),),
                      "sendrecv": (Send(partner, 3, size), Recv(partner, 3, size))}[action]
            name = {"send": "MPI_Send", "recv": "MPI_Recv", "sendrecv": "MPI_Sendrecv"}[action]
            calls.append(Call(name, t, t, events))
    return calls, t


def synthetic(template, numprocs: int) -> Trace:
    """Every rank: 5 ring exchanges with a computation before each, then the tree, twice."""
    def rank(r):
        calls, t = [Call("MPI_Init", 0.0, 0.0)], 0.0
        for _ in range(2):
            for _ in range(5):
                t += GAP
                right, left = (r + 1) % numprocs, (r - 1) % numprocs
                calls.append(Call("MPI_Sendrecv", t, t, (Send(right, 7, 64), Recv(left, 7, 64))))
            t += GAP
            tree, t = tree_calls(template, numprocs, r, t)
            calls += tree
        t += GAP
        return tuple(calls + [Call("MPI_Finalize", t, t)])
    return Trace(tuple(rank(r) for r in range(numprocs)))


def write(tmp_path, text):
    path = tmp_path / "model.py"
    path.write_text(text)
    return load_model(str(path))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_a_tree_traced_at_4_and_8_ranks_runs_message_for_message_at_other_counts(
        template, tmp_path):
    x = extract([synthetic(template, 4), synthetic(template, 8)])
    assert f"recognised as a {template.title}" in x.text
    assert x.merged             # the tree is one token on every rank: one program
    model = write(tmp_path, x.text)
    machine = Machine(Constant(1e-5))
    for n in (2, 3, 13, 32):
        want = fastengine.simulate(trace_model(synthetic(template, n)), n, machine)
        got = fastengine.simulate(model, n, machine)
        assert got.makespan == pytest.approx(want.makespan, rel=1e-9), n
        assert got.messages_simulated == want.messages_simulated


def test_the_tree_with_the_most_messages_wins_over_one_it_contains(tmp_path):
    """mpi4py's reduce contains MPICH's binomial one (ranks that keep sending):
    the larger reading is taken, or the extra sends would be left as peers."""
    template = TEMPLATES[0]
    x = extract([synthetic(template, 8)])
    assert "mpi4py-reduce" in x.text and "binomial-reduce" not in x.text


def test_an_exchange_of_two_ranks_is_not_taken_for_a_tree():
    """At 2 ranks every exchange is a one-step tree; alone it proves nothing."""
    def ring(n):
        return Trace(tuple(
            (Call("MPI_Init", 0, 0),
             *(Call("MPI_Send" if (k + r) % 2 else "MPI_Recv", k, k,
                    (Send(1 - r, 0, 8),) if (k + r) % 2 else (Recv(1 - r, 0, 8),))
               for k in range(1, 9)),
             Call("MPI_Finalize", 10, 10)) for r in range(n)))
    assert "tree" not in extract(ring(2)).text


def test_a_two_rank_trace_takes_the_tree_found_at_four(tmp_path):
    template = TEMPLATES[0]
    x = extract([synthetic(template, 2), synthetic(template, 4)])
    assert x.merged and "numprocs == 2" not in x.text


def test_mpi4py_object_reduce_allreduce_and_scan_traced_at_4_ranks_run_at_16(
        tmp_path, cache_home):
    """The real thing: mpi4py's lower-case collectives of Python objects."""
    program = PROGRAMS / "objects.py"
    out = tmp_path / "trace"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "pevpm", "trace", "-o", str(out), "--",
                           MPIEXEC, "-n", "4", sys.executable, str(program)],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr
    x = extract(read_archive(out))
    assert "mpi4py-reduce" in x.text and "recursive-doubling" in x.text
    model = write(tmp_path, x.text)
    for n in (4, 5, 16):
        assert trial_run(model, n) is None, n
