"""pevpm extract across rank arms and counts, on traces built here (exact values):
one law per gap that the edge and interior ranks share, the launcher's skew
left out, one kind of seconds at every count, and a self-check that stays
cheap for long loops at 1,024 ranks."""

import re

from pevpm.model.builder import ModelBuilder
from pevpm.trace.events import Call, Recv, Send, Trace
from pevpm.trace.extract.extract import extract, self_check, trial_run


def chain(numprocs: int, sweep: float, iterations: int = 12, cores: int | None = None,
          cpu_share: float | None = None, late: float = 0.0) -> Trace:
    """A non-periodic 1-D halo exchange: every iteration each rank computes
    ``sweep`` seconds (1% up and down in turn), sends to each neighbour it
    has, then receives from each.  ``cpu_share``: the calls carry CPU seconds,
    that share of each gap; ``late``: rank 1 leaves MPI_Init that much later."""
    def rank(me: int) -> tuple:
        peers = [p for p in (me - 1, me + 1) if 0 <= p < numprocs]
        t = late if me == 1 else 0.0
        calls = [Call("MPI_Init", 0.0, t)]
        for i in range(iterations):
            gap = sweep * (1.01 if i % 2 else 0.99)
            cpu = None if cpu_share is None else gap * cpu_share
            t += gap
            for k, p in enumerate(peers):
                calls.append(Call("MPI_Send", t, t + 1e-6, (Send(p, 0, 64),),
                                  cpu=cpu if k == 0 else (0.0 if cpu_share else None)))
                t += 1e-6
            for p in peers:
                calls.append(Call("MPI_Recv", t, t + 1e-6, (Recv(p, 0, 64),),
                                  cpu=0.0 if cpu_share else None))
                t += 1e-6
        calls.append(Call("MPI_Finalize", t + 1e-6, t + 2e-6, cpu=0.0 if cpu_share else None))
        return tuple(calls)
    return Trace(tuple(rank(r) for r in range(numprocs)), cores=cores)


def loop_sweeps(text: str) -> list[str]:
    """The first computation of every arm's loop."""
    return re.findall(r"with b\.loop\('parameter loop1'\):\n(?: +#.*\n)* +(b\.serial\(.*\))",
                      text)


def test_edge_and_interior_ranks_share_one_law_for_their_sweep():
    # 1e-5 + 8e-5 / p: the interior ranks exist at 4 and 8 only, the edges at 2, 4, 8
    x = extract([chain(p, 1e-5 + 8e-5 / p) for p in (2, 4, 8)], "chain")
    sweeps = loop_sweeps(x.text)
    assert x.text.count("ranks.case(") == 3 and len(sweeps) == 3
    assert len(set(sweeps)) == 1, sweeps
    assert "/ numprocs" in sweeps[0]


def test_a_rank_that_left_mpi_init_late_does_not_compute_that_wait():
    x = extract([chain(2, 1e-3, late=0.5), chain(4, 1e-3, late=0.5)], "chain")
    assert "the ranks left MPI_Init up to 500 ms apart at 2, 500 ms apart at 4 ranks" in x.text
    assert not re.search(r"b\.serial\(.*0\.5", x.text)


def test_cpu_seconds_are_taken_at_every_count_once_one_count_shared_its_cores():
    # wall gaps three times the CPU seconds at 2 ranks (others' load), 4 ranks on 2 cores
    x = extract([chain(2, 3e-3, cores=2, cpu_share=1 / 3), chain(4, 1e-3, cores=2, cpu_share=1)],
                "chain")
    assert "the 2-rank trace had a core per rank, but its computations are taken in CPU " \
           "seconds too" in x.text
    sweeps = loop_sweeps(x.text)
    assert len(sweeps) == 3 and len(set(sweeps)) == 1
    assert sweeps[0].startswith("b.serial('gamma(0.001, ")


def ring(passes: int) -> ModelBuilder:
    b = ModelBuilder(parameters={"loop1": passes})
    with b.loop("parameter loop1"):
        b.message("MPI_Sendrecv", 8, source="(procnum + numprocs - 1) % numprocs",
                  dest="(procnum + 1) % numprocs", tag=0)
    return b


def test_the_self_check_runs_long_constant_loops_a_few_passes():
    # a million passes at 1,024 ranks: billions of events, checked in three passes
    assert trial_run(ring(10**6).build(), 1024) is None
    assert self_check(ring(10**6).build(), [2]) == []


def test_a_model_that_fails_in_its_first_passes_still_fails():
    b = ring(10**6)
    with b.on_ranks("procnum == 0"):
        b.message("MPI_Recv", 8, source="1", tag=7)
    assert [(n, fatal) for n, _, fatal in self_check(b.build(), [2])] == [
        (2, True), (8, True), (64, True), (1024, True)]
