"""pevpm extract on a master and its workers (the bag of tasks' pattern):
the worker's "receive until the tag says stop" becomes a Repeat, the
master's answers to whichever worker is done name the receive's status, and
its messages to every worker in turn a loop over the ranks, so a model from
traces at 2 and 4 ranks runs at 8 and 16."""

import heapq
import re

import pytest

from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.loader import load_model
from pevpm.trace.events import Call, Recv, Send, Trace
from pevpm.trace.extract.extract import extract
from pevpm.vm.kernel import fastengine

DEFN, WORK, DIE = 3001, 3002, 3003
JOBS = 24


class Clock:
    """One rank's calls, each 1 us long, after ``gap`` seconds of computation."""

    def __init__(self):
        self.calls, self.t = [Call("MPI_Init", 0.0, 0.0)], 0.0

    def call(self, name, event, gap=2e-6):
        self.t += gap
        self.calls.append(Call(name, self.t, self.t + 1e-6, (event,)))
        self.t += 1e-6

    def done(self):
        return tuple(self.calls + [Call("MPI_Finalize", self.t + 1e-6, self.t + 1e-6)])


def bag(numprocs: int, jobs: int = JOBS, tail: float = 0.0) -> Trace:
    """The master hands ``jobs`` jobs (1 ms, 2 ms, 3 ms ...) to the first worker
    free, as the run would; every worker stops on a DIE message; then the
    master computes ``tail`` seconds."""
    master, workers = Clock(), {w: Clock() for w in range(1, numprocs)}
    free, job = [], 0

    def hand_out(w):
        nonlocal job
        master.call("MPI_Send", Send(w, DEFN, 24))
        master.call("MPI_Send", Send(w, WORK, 1000))
        worker = workers[w]
        worker.call("MPI_Recv", Recv(0, DEFN, 24))
        worker.call("MPI_Recv", Recv(0, WORK, 1000))
        worker.call("MPI_Send", Send(0, DEFN, 24), gap=1e-3 * (1 + job % 3))
        worker.call("MPI_Send", Send(0, WORK, 1000))
        heapq.heappush(free, (worker.t, w))
        job += 1

    def collect():
        _, w = heapq.heappop(free)
        master.call("MPI_Recv", Recv(w, DEFN, 24))
        master.call("MPI_Recv", Recv(w, WORK, 1000))
        return w

    for w in workers:
        hand_out(w)
    while job < jobs:
        hand_out(collect())
    while free:
        collect()
    for w, worker in workers.items():
        master.call("MPI_Send", Send(w, DIE, 24))
        worker.call("MPI_Recv", Recv(0, DIE, 24))
    master.t += tail
    return Trace((master.done(),) + tuple(workers[w].done() for w in workers))


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    x = extract([bag(2), bag(4)], "bag")
    path = tmp_path_factory.mktemp("bag") / "model.py"
    path.write_text(x.text)
    return x, load_model(str(path))


def test_worker_repeats_until_the_stop_tag(extracted):
    x, _ = extracted
    assert "with ranks.case('procnum > 0'):" in x.text
    assert f"with b.repeat('s0.MPI_TAG == {DIE}'):" in x.text
    assert "tag='MPI_ANY_TAG', request='s0'" in x.text
    assert f"with b.on_ranks('s0.MPI_TAG != {DIE}'):" in x.text
    assert any("Repeat until s0.MPI_TAG == 3003" in note for note in x.notes)


def test_master_answers_any_source_and_loops_over_the_workers(extracted):
    x, _ = extracted
    assert "source='MPI_ANY_SOURCE'" in x.text
    assert "dest='s0.MPI_SOURCE'" in x.text and "source='s0.MPI_SOURCE'" in x.text
    # the first jobs and the last results: once per worker, up to the jobs there are
    assert x.text.count("with b.loop('min(numprocs - 1, parameter total1)', index='k'):") == 1
    assert x.text.count("with b.loop('min(numprocs - 1, parameter total1)'):") == 1
    # the stop messages: to every worker
    assert x.text.count("with b.loop('numprocs - 1', index='k'):") == 1
    assert "dest='(k < procnum ? k : k + 1)', tag=3003" in x.text


def test_one_program_per_role_at_every_count(extracted):
    """At 2 ranks the master hears from one worker only; what the 4-rank trace
    showed (any source, loops over the workers, the last results) is applied
    to it, so master and worker have one arm each, and the master's answers
    are the jobs less one per worker."""
    x, _ = extracted
    assert x.text.count("ranks.case(") == 2
    assert "with ranks.case('procnum == 0'):" in x.text
    assert "with b.loop('parameter total1 - min(numprocs - 1, parameter total1)'):" in x.text


@pytest.mark.parametrize("numprocs", [2, 4, 8, 16, 25, 26, 32, 64])
def test_model_runs_beyond_the_traced_counts(extracted, numprocs):
    """Every job is two messages each way and every worker gets its stop message
    (no deadlock, nothing left over); the jobs are the traced ones at every
    count, also where there are more workers than jobs."""
    _, model = extracted
    result = fastengine.simulate(model, numprocs, Machine(Constant(1e-6)))
    assert result.messages_simulated == 4 * JOBS + numprocs - 1
    assert result.outstanding == ()
    assert result.makespan > JOBS * 1e-3 / min(numprocs - 1, JOBS)


def test_one_worker_alone_gives_no_any_source():
    x = extract(bag(2), "bag")
    assert "MPI_ANY_SOURCE" not in x.text
    assert "b.repeat('s0.MPI_TAG == 3003')" in x.text


def halo(numprocs: int, iterations: int = 6) -> Trace:
    """A 1-D halo exchange: every rank receives from its two neighbours in a
    fixed order each iteration (up, then down)."""
    ranks = []
    for r in range(numprocs):
        clock = Clock()
        for _ in range(iterations):
            for peer in (r - 1, r + 1):
                if 0 <= peer < numprocs:
                    clock.call("MPI_Send", Send(peer, 0, 64))
            for peer in (r - 1, r + 1):
                if 0 <= peer < numprocs:
                    clock.call("MPI_Recv", Recv(peer, 0, 64), gap=1e-4)
        ranks.append(clock.done())
    return Trace(tuple(ranks))


def test_receives_from_neighbours_in_turn_keep_their_sources():
    """Two sources taking turns are the program's, not whoever is ready."""
    x = extract([halo(4), halo(6)], "halo")
    assert "MPI_ANY_SOURCE" not in x.text and ".MPI_SOURCE" not in x.text
    assert "source='procnum - 1'" in x.text or "(procnum + numprocs - 1) % numprocs" in x.text


def test_a_one_rank_trace_beside_the_others_is_taken_as_it_is():
    """At one rank the master receives nothing: the any-source hint of the
    larger counts finds no receive to start from (this raised IndexError)."""
    alone = Clock()
    alone.call("MPI_Barrier", None, gap=JOBS * 2e-3)
    x = extract([Trace((alone.done(),)), bag(2), bag(4)], "bag")
    assert f"with b.repeat('s0.MPI_TAG == {DIE}'):" in x.text


def test_the_command_says_the_model_does_not_run_at_one_rank(tmp_path, capsys, monkeypatch):
    """From 2 and 4 ranks the master has always had a worker: alone it waits
    for one, and extract says so instead of leaving it to the first prediction."""
    from pevpm.cli import main

    traces = {str(tmp_path / f"run{p}"): bag(p) for p in (2, 4)}
    monkeypatch.setattr("pevpm.trace.otf2.read.read_archive", lambda path: traces[str(path)])
    assert main(["extract", *traces, "-o", str(tmp_path / "m.py")]) == 0
    err = capsys.readouterr().err
    assert re.search(r"pevpm extract: note: the model does not run \(deadlock: rank 0 "
                     r"blocked in MPI_Recv from any source .*\) at 1 rank\n", err)
    assert "pevpm extract: the model runs at 2, 4, 8, 64, 1024 ranks" in err
    assert re.search(r"pevpm extract: note: MPI_Send tag 3001, .*: a conserved total, the "
                     r"parameter total1 = 24 ", err)


def test_the_jobs_handed_out_are_a_conserved_total(extracted):
    """The first jobs (1, 3) and the answers (23, 21) add up to the 24 jobs at
    2 and 4 ranks, and so do the answers and the last results: the loops that
    grow stop at that total, a parameter, and extract says so."""
    x, model = extracted
    assert model.parameters == {"total1": JOBS}
    note = next(n for n in x.notes if "conserved total" in n)
    assert note.startswith(f"MPI_Send tag {DEFN}, MPI_Send tag {WORK}, MPI_Recv tag {DEFN}, "
                           f"MPI_Recv tag {WORK}: as many at every traced count, while the "
                           "passes of loop 1 (1, 3), loop 3 (1, 3) grew with numprocs and "
                           "those of loop 2 (23, 21) shrank, a growing loop's and its shrinking "
                           f"partner's adding up to {JOBS} at 2, 4 ranks: a conserved total")
    assert f"the parameter total1 = {JOBS} (pevpm predict -D total1=N)" in note
    # the stop messages are not part of it: one to every worker
    assert f"tag {DIE}" not in note
    assert x.text.count("# total1: a total these loops conserve") == 3


@pytest.mark.parametrize("numprocs", [8, 26, 64, 256])
def test_as_many_jobs_as_the_hand_written_model_at_any_count(extracted, numprocs):
    """examples/bag_of_tasks/model.py primes min(numprocs - 1, jobs) workers;
    with as many jobs, both models send the same messages (two each way a
    job, a stop message to every worker), more workers than jobs or not."""
    _, model = extracted
    hand = load_model("examples/bag_of_tasks/model.py")
    machine = Machine(Constant(1e-6))
    ours = fastengine.simulate(model, numprocs, machine)
    theirs = fastengine.simulate(hand, numprocs, machine, params={"jobs": JOBS})
    assert ours.messages_simulated == theirs.messages_simulated == 4 * JOBS + numprocs - 1


def test_the_total_is_a_parameter(extracted):
    _, model = extracted
    result = fastengine.simulate(model, 64, Machine(Constant(1e-6)), params={"total1": 10})
    assert result.messages_simulated == 4 * 10 + 63
    assert result.outstanding == ()


def test_jobs_that_grow_with_the_ranks_are_no_conserved_total():
    """24 jobs at 2 ranks, 30 at 4: the answers' loop grows with the first jobs'
    (23, 27), nothing adds up to one number, and the counts are written as
    before (the answers' a constant within the fit's tolerance)."""
    x = extract([bag(2, 24), bag(4, 30)], "bag")
    assert "total" not in x.text and "min(" not in x.text
    assert not any("conserved" in note for note in x.notes)
    assert re.findall(r"with b\.loop\((.*)\):", x.text) == [
        "'numprocs - 1', index='k'", "'floor(25 + 0.5)'", "'numprocs - 1'",
        "'numprocs - 1', index='k'"]


def test_the_work_after_the_stop_messages_is_done_once(tmp_path):
    """The master's computation after its last stop message (its report) ends
    the last block of the loop over the workers, but is not one of its passes:
    it follows the loop, once at every count (it had been pooled into every
    pass, 50 ms times the workers at 64 ranks)."""
    machine = Machine(Constant(1e-6))
    times = {}
    for tail in (0.0, 0.05):
        x = extract([bag(2, tail=tail), bag(4, tail=tail)], "bag")
        assert ("b.serial(0.050001)" in x.text) == (tail > 0)   # the 1 us gap before it too
        path = tmp_path / f"tail{tail}.py"
        path.write_text(x.text)
        model = load_model(str(path))
        times[tail] = [fastengine.simulate(model, n, machine).makespan for n in (2, 4, 64, 256)]
    for with_tail, without in zip(times[0.05], times[0.0]):
        assert with_tail - without == pytest.approx(0.05, abs=2e-6)


def sender(numprocs: int, first: int, total: int = 20) -> Trace:
    """Rank 0 sends ``first`` messages to rank 1, says it is done (tag DIE),
    then ``total - first`` times waits for rank 1's answer and sends again;
    the other ranks do nothing."""
    zero, one = Clock(), Clock()
    for _ in range(first):
        zero.call("MPI_Send", Send(1, DEFN, 24))
        one.call("MPI_Recv", Recv(0, DEFN, 24))
    zero.call("MPI_Send", Send(1, DIE, 8))
    one.call("MPI_Recv", Recv(0, DIE, 8))
    for _ in range(total - first):
        one.call("MPI_Send", Send(0, WORK, 8))
        zero.call("MPI_Recv", Recv(1, WORK, 8))
        zero.call("MPI_Send", Send(1, DEFN, 24))
        one.call("MPI_Recv", Recv(0, DEFN, 24))
    idle = tuple(Clock().done() for _ in range(numprocs - 2))
    return Trace((zero.done(), one.done()) + idle)


def test_a_total_whose_growing_loop_has_no_exact_law_is_not_capped():
    """The first sends grow 2 -> 7 (no law of the family gives both exactly),
    the rest shrink 18 -> 13: the total (20) is seen and said, not used."""
    x = extract([sender(2, 2), sender(4, 7)], "sender")
    assert "min(" not in x.text and "total" not in x.text
    assert any("loops conserve 20 passes at every traced count, but the growing one's "
               "count is no exact law: not capped" in note for note in x.notes)


def test_a_growing_loop_with_an_exact_law_is_capped():
    """The same with 2 -> 4 first sends (numprocs, fitted c*p): capped."""
    x = extract([sender(2, 2), sender(4, 4)], "sender")
    assert "with b.loop('min(1 * numprocs, parameter total1)'):" in x.text
    assert "with b.loop('parameter total1 - min(1 * numprocs, parameter total1)'):" in x.text
