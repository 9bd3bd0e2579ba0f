"""MPI semantics, deadlock reports, limits and model errors."""

import numpy as np
import pytest
from engine_models import figure5_model

from pevpm.errors import DeadlockError, ModelError, SimulationError, TruncationError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.machine.transfer import Transfer
from pevpm.model.ast import Location, Message
from pevpm.model.builder import ModelBuilder
from pevpm.model.directives import parse_directives
from pevpm.model.expr import Expr
from pevpm.vm.kernel.engine import Limits, simulate

MACHINE = Machine(Constant(1.0))


class BySource:
    """A deterministic model whose time depends on the sender (to order arrivals)."""

    def __init__(self, times):
        self.times = times
        self.seen: list[Transfer] = []

    def transfer_time(self, transfer, rng):
        self.seen.append(transfer)
        return self.times[transfer.src]

    def local_completion_time(self, transfer, rng):
        return 0.0

    def bounded(self, which):
        return self


def two_rank(sender, receiver):
    """Model where rank 0 runs ``sender(b)`` and rank 1 runs ``receiver(b)``."""
    b = ModelBuilder()
    with b.on_ranks("procnum == 0"):
        sender(b)
    with b.on_ranks("procnum == 1"):
        receiver(b)
    return b.build()


def test_figure5_with_blocking_sends_deadlocks_naming_every_rank():
    with pytest.raises(DeadlockError) as err:
        simulate(figure5_model(nonblocking=False), 3, MACHINE)
    assert str(err.value) == (
        "deadlock: rank 0 blocked in MPI_Send to 1 at model: statement 1 (MPI_Send); "
        "rank 1 blocked in MPI_Send to 2 at model: statement 1 (MPI_Send); "
        "rank 2 blocked in MPI_Send to 0 at model: statement 1 (MPI_Send)")
    assert set(err.value.blocked) == {0, 1, 2}


def test_deadlock_report_uses_source_locations_and_lists_terminated_ranks():
    loc = Location("halo.c", 42, 5)
    b = ModelBuilder()
    with b.on_ranks("procnum == 1"):
        b.add(Message("MPI_Recv", Expr.of(8), src=Expr.of(0), dst=Expr.of(1), loc=loc))
    with pytest.raises(DeadlockError) as err:
        simulate(b.build(), 3, MACHINE)
    assert str(err.value) == ("deadlock: ranks 0,2 terminated; rank 1 blocked in MPI_Recv "
                              "from 0 at halo.c:42:5")


def test_deadlock_report_groups_many_ranks():
    b = ModelBuilder()
    b.recv(8, source="MPI_ANY_SOURCE")
    with pytest.raises(DeadlockError, match=r"^deadlock: ranks 0-63 blocked in MPI_Recv from "
                                            r"any source at model: statement 1 \(MPI_Recv\)$"):
        simulate(b.build(), 64, MACHINE)


def test_tags_select_the_message_and_any_tag_takes_the_first():
    def send(b):
        b.isend(8, dest=1, tag=1, request="a")
        b.serial(1.0)
        b.isend(8, dest=1, tag=2, request="b")
        b.waitall()

    def recv(b):
        b.recv(8, source=0, tag=2)      # skips the tag-1 message, gets the later one
        b.recv(8, source=0, tag="MPI_ANY_TAG")

    run = simulate(two_rank(send, recv), 2, Machine(Constant(0.5)), trace=True)
    assert [(m.tag, m.recv_end) for m in run.messages] == [(2, 1.5), (1, 1.5)]


def test_non_overtaking_between_a_pair_even_if_a_later_message_is_faster():
    sizes = {}

    class SizeTimed(BySource):
        def transfer_time(self, transfer, rng):
            return 10.0 if transfer.size == 1000 else 0.5

    def send(b):
        b.isend(1000, dest=1, request="big")
        b.isend(10, dest=1, request="small")
        b.waitall()

    def recv(b):
        b.recv(1000, source=0)
        b.recv(1000, source=0)

    run = simulate(two_rank(send, recv), 2, Machine(SizeTimed(sizes)), trace=True)
    assert [m.size for m in run.messages] == [1000, 10]
    assert run.ranks[1].finish == 10.0


def test_any_source_takes_the_earliest_arrival():
    b = ModelBuilder()
    with b.on_ranks("procnum != 0"):
        b.send(8, dest=0)
    with b.on_ranks("procnum == 0"):
        b.recv(8, source="MPI_ANY_SOURCE")
        b.recv(8, source="MPI_ANY_SOURCE")
        b.recv(8, source="MPI_ANY_SOURCE")
    model = BySource({1: 3.0, 2: 1.0, 3: 2.0})
    run = simulate(b.build(), 4, Machine(model), trace=True)
    assert [m.src for m in run.messages] == [2, 3, 1]
    assert [r.finish for r in run.ranks] == [3.0, 3.0, 1.0, 2.0]


def test_user_wildcards_never_match_collective_context():
    from pevpm.model.expr import ANY_SOURCE, ANY_TAG
    from pevpm.vm.kernel.matching import COLLECTIVE, MatchingQueues, PostedRecv, PostedSend
    queues = MatchingQueues(2)
    internal = PostedSend(src=1, dst=0, tag=-2_000_016, context=COLLECTIVE, size=8, posted=0.0,
                          seq=1)
    queues.post_send(internal)
    user = PostedRecv(rank=0, src=ANY_SOURCE, tag=ANY_TAG, context=0, size=8, posted=0.0, seq=2)
    assert not queues.post_recv(user)


def test_test_at_the_head_is_false_then_wait_completes():
    def send(b):
        b.serial(2.0)
        b.send(8, dest=1)

    def recv(b):
        b.irecv(8, source=0, request="r")
        b.serial(1.0)
        b.test("r")          # nothing can have arrived by t=1: flag false
        b.wait("r")

    run = simulate(two_rank(send, recv), 2, Machine(Constant(0.5)))
    assert run.ranks[1].finish == 2.5


def test_test_of_a_request_already_matched():
    def send(b):
        b.send(8, dest=1)

    def recv(b):
        b.irecv(8, source=0, request="r")
        b.serial(3.0)
        b.test("r")
        b.wait("r")         # already complete: returns at once

    run = simulate(two_rank(send, recv), 2, Machine(Constant(0.5)))
    assert run.ranks[1].finish == 3.0
    assert run.ranks[0].finish == 0.5


def test_waitall_on_nothing_is_fine_and_waitall_without_names_waits_for_all():
    b = ModelBuilder()
    b.waitall()
    b.isend(8, dest="1 - procnum", request="s")
    b.irecv(8, source="1 - procnum", request="r")
    b.waitall()
    b.wait("s")              # a completed request waits no more
    run = simulate(b.build(), 2, Machine(Constant(0.5)))
    assert run.makespan == 0.5


def test_condition_draws_branches_by_weight_from_the_rng():
    b = ModelBuilder()
    with b.loop(2000), b.condition() as arms:
        with arms.case(3):
            b.serial(1.0)
        with arms.case(1):
            b.serial(0.0)
    runs = [simulate(b.build(), 1, MACHINE, rng=np.random.default_rng(seed)).makespan
            for seed in (1, 2)]
    for taken in runs:   # binomial(2000, 0.75): sd 19.4, tolerance 5 sd
        assert abs(taken - 1500) < 97
    assert runs[0] != runs[1]
    assert simulate(b.build(), 1, MACHINE, rng=np.random.default_rng(1)).makespan == runs[0]


def test_event_and_time_limits_stop_runaway_models():
    b = ModelBuilder()
    with b.loop(10**9):
        b.serial(1.0)
    with pytest.raises(SimulationError, match="after 1000 events"):
        simulate(b.build(), 2, MACHINE, limits=Limits(max_events=1000))
    with pytest.raises(SimulationError, match="virtual time limit of 50.0 s passed by rank 0"):
        simulate(b.build(), 2, MACHINE, limits=Limits(max_time=50.0))


# ------------------------------------------------------------------ model errors

def one_statement(add):
    b = ModelBuilder(constants={"xsize": 256})
    add(b)
    return b.build()


@pytest.mark.parametrize("add, message", [
    (lambda b: b.send("xsiz * 4", dest=1),
     "model: statement 1 (MPI_Send): unknown name 'xsiz' in 'xsiz * 4' (did you mean 'xsize'?)"),
    (lambda b: b.send("xsize - 300", dest=1),
     "model: statement 1 (MPI_Send): negative message size -44 from 'xsize - 300' on rank 0"),
    (lambda b: b.send(8, dest="procnum + 1"),
     ("model: statement 1 (MPI_Send): destination rank 2 from 'procnum + 1' on rank 1 is "
      "outside 0..1")),
    (lambda b: b.recv(8, source="procnum - 1"),
     ("model: statement 1 (MPI_Recv): source rank -1 from 'procnum - 1' on rank 0 is outside "
      "0..1")),
    (lambda b: b.call("halo"), "model: statement 1 (Call): unknown subroutine 'halo'"),
    (lambda b: b.wait("rq"), "model: statement 1 (MPI_Wait): unknown request id 'rq' on rank 0"),
    (lambda b: b.send(8, dest=1, tag=-3),
     "model: statement 1 (MPI_Send): tag -3 from '-3' must be a whole number >= 0"),
    (lambda b: b.serial("-1.0"),
     "model: statement 1 (Serial): negative serial time -1.0 from '-1.0'"),
    (lambda b: b.serial("1 / (procnum - procnum)"),
     "model: statement 1 (Serial): division by zero in '1 / (procnum - procnum)'"),
    (lambda b: b.collective("MPI_Bcast", 8, root=5),
     "model: statement 1 (MPI_Bcast): root rank 5 from '5' on rank 0 is outside 0..1"),
])
def test_model_errors_name_the_place(add, message):
    with pytest.raises(ModelError) as err:
        simulate(one_statement(add), 2, MACHINE)
    assert str(err.value) == message
    assert "\n" not in str(err.value)


def test_unknown_request_suggests_a_close_name():
    b = ModelBuilder()
    b.isend(8, dest="1 - procnum", request="req")
    b.wait("rq")
    with pytest.raises(ModelError, match=r"unknown request id 'rq' on rank 0 \(did you mean "
                                         r"'req'\?\)"):
        simulate(b.build(), 2, MACHINE)


@pytest.mark.parametrize("weights", [(1, -1), (0, 0)])
def test_bad_condition_weights(weights):
    b = ModelBuilder()
    with b.condition() as arms:
        for w in weights:
            with arms.case(w):
                b.serial(1.0)
    with pytest.raises(ModelError, match=r"statement 1 \(Condition\): condition weights must "
                                         r"be >= 0 and not all 0"):
        simulate(b.build(), 1, MACHINE)


def test_recursive_subroutine_is_an_error():
    b = ModelBuilder()
    with b.subroutine("f"):
        b.call("f")
    b.call("f")
    with pytest.raises(ModelError, match="subroutine 'f' calls itself"):
        simulate(b.build(), 1, MACHINE)


def test_nested_loop_may_not_reuse_an_enclosing_loops_index():
    b = ModelBuilder()
    with b.loop(3, index="i"):
        with b.on_ranks("procnum == 0"), b.loop(2, index="i"):
            b.serial("i")
        b.serial("i")
    with pytest.raises(ModelError) as err:
        simulate(b.build(), 1, MACHINE)
    assert str(err.value) == ("model: statement 1.1.1.1 (Loop): loop index 'i' is taken by the "
                              "enclosing loop at model: statement 1 (Loop); nested loops need "
                              "distinct indices")


@pytest.mark.parametrize("index", ["procnum", "N", "steps"])
def test_loop_index_may_not_overwrite_a_model_name(index):
    b = ModelBuilder(constants={"N": 4}, parameters={"steps": 2})
    with b.loop(3, index=index):
        b.serial("0.001")
    with pytest.raises(ModelError) as err:
        simulate(b.build(), 1, MACHINE, params={"steps": 2})
    assert str(err.value) == (f"model: statement 1 (Loop): loop index {index!r} would overwrite "
                              f"the model's own {index!r} (procnum, numprocs, a constant, a "
                              "parameter or a receive status) for the rest of the run; rename it")


SUBROUTINE_LOOP_IN_A_LOOP = """\
// PEVPM Subroutine name = halo
// PEVPM {
// PEVPM Loop iterations = 2
// PEVPM &    index = i
// PEVPM {
// PEVPM }
// PEVPM }
// PEVPM Loop iterations = 3
// PEVPM &    index = i
// PEVPM {
// PEVPM Call name = halo
// PEVPM }
"""


def test_a_subroutines_loop_may_not_reuse_its_callers_index():
    # each loop is fine where it is written, so the file parses
    model = parse_directives(SUBROUTINE_LOOP_IN_A_LOOP, "halo.c")
    with pytest.raises(ModelError, match=r"^halo\.c:3:10: loop index 'i' is taken by the "
                                         r"enclosing loop at halo\.c:8:10; "):
        simulate(model, 1, MACHINE)


def test_sibling_loops_share_an_index_and_nested_ones_see_their_own():
    b = ModelBuilder()
    with b.loop(2, index="i"):
        b.serial("i")                       # 0 + 1
    with b.loop(3, index="i"):
        with b.loop(2, index="j"):
            b.serial("j")                   # 3 x (0 + 1)
        b.serial("i")                       # 0 + 1 + 2
    assert simulate(b.build(), 1, MACHINE).makespan == 7.0


def test_source_location_is_used_when_present():
    b = ModelBuilder()
    b.add(Message("MPI_Send", Expr.of(-8), src=Expr.of("procnum"), dst=Expr.of(0),
                  loc=Location("a.c", 7, 3)))
    with pytest.raises(ModelError, match=r"^a\.c:7:3: negative message size -8"):
        simulate(b.build(), 1, MACHINE)


def test_runon_selecting_nobody_for_a_receive_is_a_deadlock_naming_it():
    b = ModelBuilder()
    with b.on_ranks("procnum == 0"):
        b.recv(8, source=1)
    with b.on_ranks("procnum == 7"):   # typo: nobody is rank 7 of 2
        b.send(8, dest=0)
    with pytest.raises(DeadlockError, match="rank 0 blocked in MPI_Recv from 1 at model: "
                                            r"statement 1\.1\.1 \(MPI_Recv\); rank 1 terminated"):
        simulate(b.build(), 2, MACHINE)


def test_ranks_must_fit_the_topology():
    with pytest.raises(SimulationError, match="5 ranks do not fit on 2 nodes x 2"):
        simulate(figure5_model(True), 5, Machine(Constant(1.0), Topology(2, nodes=2)))


def test_deadlock_report_of_many_distinct_peers_stays_short():
    with pytest.raises(DeadlockError) as err:
        b = ModelBuilder()
        b.send(8, dest="(procnum + 1) % numprocs")
        simulate(b.build(), 100, MACHINE)
    assert str(err.value) == ("deadlock: ranks 0-99 blocked in MPI_Send at model: statement 1 "
                              "(MPI_Send)")


def test_any_source_does_not_draw_times_for_sends_posted_after_the_best_arrival():
    b = ModelBuilder()
    with b.on_ranks("procnum != 0"):
        b.serial("procnum == 3 ? 5.0 : procnum == 4 ? 0.25 : 0.0")
        b.send(8, dest=0)
    with b.on_ranks("procnum == 0"):
        b.serial(6.0)
        for _ in range(4):
            b.recv(8, source="MPI_ANY_SOURCE")
    model = BySource({1: 4.0, 2: 1.0, 3: 0.5, 4: 3.0})
    run = simulate(b.build(), 5, Machine(model), trace=True)
    # sends are scanned in send-time order: rank 3's (posted at 5) is drawn only
    # once no earlier send is left to beat it
    assert [t.src for t in model.seen] == [1, 2, 4, 3]
    assert [m.src for m in run.messages] == [2, 4, 1, 3]


def test_message_larger_than_its_receive_is_truncation_naming_both_ends():
    def send(b):
        b.add(Message("MPI_Send", Expr.of(16), src=Expr.of(0), dst=Expr.of(1), tag=Expr.of(3),
                      loc=Location("halo.c", 10, 5)))

    def recv(b):
        b.add(Message("MPI_Recv", Expr.of(8), src=Expr.of(0), dst=Expr.of(1), tag=Expr.of(3),
                      loc=Location("halo.c", 20, 5)))

    with pytest.raises(TruncationError) as err:
        simulate(two_rank(send, recv), 2, MACHINE)
    assert str(err.value) == (
        "halo.c:20:5: message truncated: rank 1's MPI_Recv takes at most 8 bytes but matched "
        "16 bytes with tag 3 from rank 0's MPI_Send at halo.c:10:5 (MPI_ERR_TRUNCATE)")
    assert isinstance(err.value, SimulationError)


def test_truncation_names_a_nonblocking_receive_built_in_python():
    def send(b):
        b.isend(64, dest=1, request="out")
        b.wait("out")

    def recv(b):
        b.irecv(32, source=0, request="in")
        b.wait("in")

    with pytest.raises(TruncationError, match=(
            r"^model: statement 2\.1\.1 \(MPI_Irecv\): message truncated: rank 1's MPI_Irecv "
            r"takes at most 32 bytes but matched 64 bytes with tag 0 from rank 0's MPI_Isend "
            r"at model: statement 1\.1\.1 \(MPI_Isend\) \(MPI_ERR_TRUNCATE\)$")):
        simulate(two_rank(send, recv), 2, MACHINE)


def test_a_receive_may_be_larger_than_its_message():
    run = simulate(two_rank(lambda b: b.send(8, dest=1), lambda b: b.recv(64, source=0)), 2,
                   MACHINE, trace=True)
    assert [m.size for m in run.messages] == [8]
    assert run.makespan == 1.0


def test_truncation_is_judged_on_the_send_actually_matched():
    # rank 0's 8-byte receive from any source takes rank 1's early small message,
    # not rank 2's large one; a receive on another tag never looks at the large one
    b = ModelBuilder()
    with b.on_ranks("procnum == 1"):
        b.send(8, dest=0)
        b.send(1000, dest=0, tag=1)
    with b.on_ranks("procnum == 2"):
        b.send(1000, dest=0)
    with b.on_ranks("procnum == 0"):
        b.recv(8, source="MPI_ANY_SOURCE")
        b.recv(1000, source="MPI_ANY_SOURCE", tag=0)
        b.recv(8, source="MPI_ANY_SOURCE", tag=1)
    with pytest.raises(TruncationError, match=r"rank 0's MPI_Recv takes at most 8 bytes but "
                                              r"matched 1000 bytes with tag 1 from rank 1's"):
        simulate(b.build(), 3, Machine(BySource({1: 1.0, 2: 2.0})))


@pytest.mark.parametrize("recv_size, truncated", [(None, False), (100, False), (99, True)])
def test_sendrecv_receives_recv_size_which_defaults_to_size(recv_size, truncated):
    b = ModelBuilder()
    b.sendrecv(100, dest="1 - procnum", source="1 - procnum", recv_size=recv_size)
    if truncated:
        with pytest.raises(TruncationError, match=r"rank \d's MPI_Sendrecv takes at most 99 "
                                                  r"bytes but matched 100 bytes"):
            simulate(b.build(), 2, MACHINE)
    else:
        assert simulate(b.build(), 2, MACHINE).makespan == 1.0


def test_sendrecv_of_unequal_halves_is_not_truncation():
    b = ModelBuilder()
    b.sendrecv("procnum == 0 ? 100 : 10", dest="1 - procnum", source="1 - procnum",
               recv_size="procnum == 0 ? 10 : 100")
    assert simulate(b.build(), 2, MACHINE).messages_simulated == 2
