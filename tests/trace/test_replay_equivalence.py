"""The shortcuts that make long replays fast change nothing (seeded synthetic traces).

Each trace is a few ranks running seeded random steps -- Sendrecv rings with one
tag and with two, non-blocking rings completed by a Waitall (some after
unsuccessful polls), blocking pairs, collectives, calls that move nothing --
with random gaps and call times, and sizes from a short list so calls repeat
as in a real trace.  Checked:

* the converter's statements for calls seen before (converted once per
  name and events) equal converting every call afresh;
* every rank's folded code (only the places that can fold) equals folding
  every instruction, in its own arm; the other ranks' arms become one jump
  to the end;
* the compiled core and the reference engine give the same run (times,
  critical path, message records, collectives) for the same seed on the
  replayed model (``tests/vm/test_engine_differential.py``
  does this for random models).
"""

import numpy as np
import pytest

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.machine.topology import Topology
from pevpm.trace.events import Call, Collective, Posted, Recv, Send, SendDone, Trace, totals
from pevpm.trace.replay.replay import _RankConverter, replay_machine, trace_model
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel import program as vm
from pevpm.vm.strategies.montecarlo import run_generator

SIZES = (8, 1024, 65536)
STEPS = ("sendrecv", "two_tags", "nonblocking", "polled", "pair", "allreduce", "bcast",
         "nothing")


def synthetic_trace(seed: int, numprocs: int, steps: int = 40, cores: int | None = None):
    """A consistent trace: every send has its receive, every rank joins each collective."""
    rng = np.random.default_rng(seed)
    world = tuple(range(numprocs))
    clocks = [float(rng.uniform(0, 1e-3)) for _ in world]
    ranks: list[list[Call]] = [[Call("MPI_Init", 0.0, c)] for c in clocks]
    request = [0] * numprocs

    def call(r, name, events=()):
        start = clocks[r] + float(rng.exponential(1e-4))
        end = start + float(rng.exponential(5e-5))
        ranks[r].append(Call(name, start, end, tuple(events)))
        clocks[r] = end

    def new_request(r):
        request[r] += 1
        return request[r]

    for _ in range(steps):
        kind = STEPS[rng.integers(len(STEPS))]
        size = int(SIZES[rng.integers(len(SIZES))])
        for r in world:
            left, right = (r - 1) % numprocs, (r + 1) % numprocs
            if kind == "sendrecv":
                call(r, "MPI_Sendrecv", (Send(right, 1, size), Recv(left, 1, size)))
            elif kind == "two_tags":
                call(r, "MPI_Sendrecv", (Send(right, 10 + r, size), Recv(left, 10 + left, size)))
            elif kind in ("nonblocking", "polled"):
                rq, sq = new_request(r), new_request(r)
                call(r, "MPI_Irecv", (Posted(rq),))
                call(r, "MPI_Isend", (Send(right, 5, size, sq),))
                if kind == "polled":
                    call(r, "MPI_Test")
                    call(r, "MPI_Iprobe")
                call(r, "MPI_Waitall", (SendDone(sq), Recv(left, 5, size, rq)))
            elif kind == "pair" and r < 2 <= numprocs:
                call(r, "MPI_Send" if r == 0 else "MPI_Recv",
                     (Send(1, 7, size),) if r == 0 else (Recv(0, 7, size),))
            elif kind in ("allreduce", "bcast"):
                op = kind.upper()
                sent, received = totals(op, size, numprocs, r == 0)
                call(r, f"MPI_{kind.capitalize()}",
                     (Collective(op, world, 0 if op == "BCAST" else None, sent, received),))
            elif kind == "nothing":
                call(r, "MPI_Comm_rank")
    for r in world:
        call(r, "MPI_Finalize")
    return Trace(tuple(tuple(calls) for calls in ranks), cores)


CASES = [(seed, numprocs) for seed in range(3) for numprocs in (2, 3)]


@pytest.mark.parametrize(("seed", "numprocs"), CASES)
@pytest.mark.parametrize("delays", [True, False])
def test_calls_seen_before_convert_as_afresh(seed, numprocs, delays, monkeypatch):
    trace = synthetic_trace(seed, numprocs)
    fast = trace_model(trace, speed=1.5, delays=delays)
    monkeypatch.setattr(_RankConverter, "statements", _RankConverter.convert_call)
    fresh = trace_model(trace, speed=1.5, delays=delays)
    assert fast.body == fresh.body
    assert len(fast.body[0].branches) == numprocs


def same_instruction(a: tuple, b: tuple) -> bool:
    """Equal instructions: numbers compared by value, other operands by identity."""
    if len(a) != len(b) or a[0] != b[0]:
        return False
    for x, y in zip(a, b):
        if hasattr(x, "value") and hasattr(y, "value"):
            if (type(x.value), x.value) != (type(y.value), y.value):
                return False
        elif x is not y and x != y:
            return False
    return True


@pytest.mark.parametrize(("seed", "numprocs"), CASES)
def test_each_rank_folds_its_own_arm_and_skips_the_others(seed, numprocs):
    program = vm.compile_model(trace_model(synthetic_trace(seed, numprocs)))
    assert len(program._folding_places) == 1               # the Runon of the ranks
    head = program._folding_places[0]
    _, arms, end, _ = program.code[head]
    starts = [pc for _, pc in arms] + [end]
    for rank in range(numprocs):
        env = {"procnum": rank, "numprocs": numprocs}
        everything = [vm._fold(ins, env)[1] for ins in program.code]
        folded = program.specialize(env)
        assert len(folded) == len(everything)
        assert folded[head] == (vm.JUMP, starts[rank])
        mine = range(starts[rank], starts[rank + 1])
        assert all(same_instruction(folded[pc], everything[pc]) for pc in mine)
        assert all(same_instruction(folded[pc], everything[pc])
                   for pc in [*range(head), *range(end, len(folded))])
        assert {folded[pc] for pc in range(head + 1, end) if pc not in mine} == {(vm.JUMP, end)}


MACHINES = {
    "hockney": Machine(Hockney(2e-5, 1e8, share_bandwidth=True)),
    "shared-cores": Machine(Hockney(2e-5, 1e8), topology=Topology(cores=1)),
    "profile": parse_machine("default"),
}


@pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")
@pytest.mark.parametrize(("seed", "numprocs"), CASES)
@pytest.mark.parametrize("machine", sorted(MACHINES))
@pytest.mark.parametrize("delays", [True, False])
def test_core_and_reference_engine_agree_on_replayed_traces(seed, numprocs, machine, delays):
    trace = synthetic_trace(seed, numprocs, cores=1 if machine == "shared-cores" else None)
    model = trace_model(trace, delays=delays)
    program = vm.compile_model(model)
    assert fastengine.why_reference(program) is None       # replays run on the core
    on = replay_machine(MACHINES[machine], delays)
    # the core itself (the adapter would quietly fall back to the reference engine)
    core = fastengine._run_core(program, model, numprocs, on, None, run_generator(seed, 0), None,
                                engine.Limits(), True)
    reference = engine.simulate(model, numprocs, on, rng=run_generator(seed, 0),
                                program=program, trace=True)
    assert core.messages_simulated == reference.messages_simulated > 0
    assert (core.makespan, core.ranks, core.critical_path, core.messages) == \
        (reference.makespan, reference.ranks, reference.critical_path, reference.messages)
    assert [(c.op, c.where, c.occurrence) for c in core.collectives] == \
        [(c.op, c.where, c.occurrence) for c in reference.collectives]
    assert all(np.array_equal(a.completion, b.completion, equal_nan=True)
               for a, b in zip(core.collectives, reference.collectives))
