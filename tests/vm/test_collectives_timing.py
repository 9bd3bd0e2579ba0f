"""Collectives run by the engine: hand-derived completion times and contention.

Constant models make every time exact: ``t_s`` is a message's transfer time
(send start to receive completion), ``t_lc`` an Isend's local completion.
Sends are eager unless said otherwise (an Isend is complete once it returns).
"""

import math

import numpy as np
import pytest

from pevpm.machine.comm_models import Constant, Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.machine.transfer import Transfer
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.collectives import CollectiveConfig
from pevpm.vm.kernel.engine import simulate

T_S, T_LC = 1.0, 0.25          # exact in binary: sums compare exactly
EAGER = 1 << 30


def run(op, numprocs, spec="library=mpich-1.2", size=128, root=0, comm=None, calls=1,
        eager_limit=EAGER, topology=None):
    builder = ModelBuilder()
    with builder.loop(calls):
        builder.collective(op, size, root=root)
    machine = Machine(comm or Constant(latency=T_S, local=T_LC), topology or Topology(),
                      eager_limit=eager_limit, collectives=CollectiveConfig.parse(spec))
    return simulate(builder.build(), numprocs, machine, rng=np.random.default_rng(0))


def groups(times):
    """(time, ranks) groups in time order."""
    found = {}
    for rank, t in enumerate(times):
        found.setdefault(float(t), []).append(rank)
    return sorted(found.items())


def test_binomial_bcast_16_ranks_pascal_groups():
    """Derivation: relative rank r is reached through popcount(r) tree edges;
    with largest-subtree-first sends, its path and its own sends together
    cost m = log2(16) = 4 steps, each a t_s (edge) or a t_lc (an Isend that
    returns before the next), so r completes at 4 t_lc + popcount(r)(t_s - t_lc):
    groups of C(4, k) ranks, the root alone first, spacing t_s - t_lc."""
    for root in (0, 5):
        done = run("MPI_Bcast", 16, root=root).collectives[0].completion
        found = groups(done)
        assert [t for t, _ in found] == [4 * T_LC + k * (T_S - T_LC) for k in range(5)]
        assert [len(ranks) for _, ranks in found] == [1, 4, 6, 4, 1]
        assert found[0][1] == [root]
        for k, (_, ranks) in enumerate(found):
            assert all(((r - root) % 16).bit_count() == k for r in ranks)


def test_bcast_isend_completing_on_delivery_loses_root_first():
    """Without eager buffering a parent's Waitall ends when its last child has
    the data: the root (children 8, 4, 2, 1) finishes at 3 t_lc + t_s, with rank 1."""
    done = run("MPI_Bcast", 16, eager_limit=0).collectives[0].completion
    assert done[0] == done[1] == 3 * T_LC + T_S
    assert done.min() == done[0]
    assert [len(ranks) for _, ranks in groups(done)] == [2, 6, 6, 2]


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32])
def test_mpich_barrier_is_log_fan_in_plus_zero_byte_bcast(n):
    """t_barrier = ceil(log2 n) t_isend(0) + t_bcast(0), rank by rank."""
    barrier = run("MPI_Barrier", n).collectives[0].completion
    bcast0 = run("MPI_Bcast", n, size=0).collectives[0].completion
    assert list(barrier) == list(math.ceil(math.log2(n)) * T_S + bcast0)


@pytest.mark.parametrize("n", [5, 8])
def test_circular_alltoall_is_n_minus_one_exchanges(n):
    done = run("MPI_Alltoall", n, spec="alltoall=circular").collectives[0].completion
    assert list(done) == [(n - 1) * T_S] * n


@pytest.mark.parametrize("throttle, batches", [(0, 1), (32, 1), (3, 3), (2, 4), (1, 7)])
def test_scattered_alltoall_waits_after_each_batch_of_partners(throttle, batches):
    """MPICH posts ``throttle`` partners at distances 0, 1, ... (itself
    included: no message), then waits: 8 ranks, throttle 2 gives the batches
    {1}, {2, 3}, {4, 5}, {6, 7}; with sends that return at once each batch
    costs one t_s."""
    done = run("MPI_Alltoall", 8, spec=f"alltoall=scattered, alltoall-throttle={throttle}",
               comm=Constant(latency=T_S)).collectives[0].completion
    assert list(done) == [batches * T_S] * 8


def test_circular_alltoall_thesis_orion_check():
    """Thesis sec. 5.5: Orion 32x1, 4 KB alltoall (128-byte blocks), exchange
    0.07 ms: 31 x 0.07 = 2.17 ms predicted (2.29 ms measured)."""
    done = run("MPI_Alltoall", 32, spec="alltoall=circular", size=128,
               comm=Constant(latency=0.07e-3)).collectives[0].completion
    assert done == pytest.approx([2.17e-3] * 32)


def test_linear_scatter_root_pays_local_completion_per_message():
    """Root: (n-1) t_lc; rank k (rank order): (k-1) t_lc + t_s."""
    done = run("MPI_Scatter", 6, spec="scatter=linear").collectives[0].completion
    assert list(done) == [5 * T_LC] + [(k - 1) * T_LC + T_S for k in range(1, 6)]


def test_binomial_reduce_with_operator_cost():
    """Each of log2(n) levels costs a transfer plus combining the buffer."""
    cost = 2.0 ** -12
    done = run("MPI_Reduce", 8, spec=f"reduce=binomial, reduce-cost={cost}", size=256,
               comm=Constant(latency=T_S)).collectives[0].completion
    assert done[0] == 3 * (T_S + 256 * cost)


def test_recursive_doubling_allreduce_is_log_exchanges():
    done = run("MPI_Allreduce", 16, spec="allreduce=recursive-doubling",
               comm=Constant(latency=T_S)).collectives[0].completion
    assert list(done) == [4 * T_S] * 16


def test_every_call_gets_its_own_per_rank_record():
    result = run("MPI_Bcast", 4, calls=3)
    assert [c.occurrence for c in result.collectives] == [0, 1, 2]
    assert all(c.op == "MPI_Bcast" and c.completion.shape == (4,) for c in result.collectives)
    per_call = np.array([c.completion for c in result.collectives])
    assert (np.diff(per_call, axis=0) > 0).all()
    # back-to-back broadcasts pipeline: the root is two Isends into its third
    # call before rank 3 finishes its first (why timing calls in series misleads)
    assert list(per_call[:, 0]) == [2 * T_LC, 4 * T_LC, 6 * T_LC]
    assert per_call[0, 3] == 2 * T_S


def test_collectives_mixed_with_user_wildcard_receives_do_not_cross():
    """A user MPI_ANY_SOURCE/ANY_TAG receive posted before a broadcast must
    take the user's message, never the broadcast's."""
    b = ModelBuilder()
    with b.on_ranks("procnum == 1"):
        b.irecv(8, "MPI_ANY_SOURCE", request="r", tag="MPI_ANY_TAG")
    b.collective("MPI_Bcast", 64, root=0)
    with b.runon() as arms:
        with arms.case("procnum == 1"):
            b.wait("r")
        with arms.case("procnum == 0"):
            b.serial(5.0)
            b.send(8, dest=1, tag=3)
    machine = Machine(Constant(latency=T_S, local=T_LC), eager_limit=EAGER,
                      collectives=CollectiveConfig.parse("library=mpich-1.2"))
    result = simulate(b.build(), 2, machine)
    assert list(result.collectives[0].completion) == [T_LC, T_S]
    assert result.ranks[1].finish == 5.0 + T_LC + T_S


class RecordingHockney(Hockney):
    """Hockney with bandwidth shared among contending messages, remembering
    the contention each message into ``watch`` met."""

    def __init__(self, watch, **kw):
        super().__init__(**kw)
        object.__setattr__(self, "seen", [])
        object.__setattr__(self, "watch", watch)

    def transfer_time(self, transfer: Transfer, rng):
        if transfer.dst == self.watch:
            self.seen.append(transfer.contention)
        return super().transfer_time(transfer, rng)


def test_linear_alltoall_hot_spot_on_rank_zero():
    """Everyone sends to rank 0 first: messages into rank 0 meet far more
    contention on its link than under the circular schedule."""
    def into_zero(spec):
        comm = RecordingHockney(0, latency=1e-5, bandwidth=1e8, share_bandwidth=True,
                                local=1e-6)
        run("MPI_Alltoall", 8, spec=spec, size=4096, comm=comm,
            topology=Topology(backplane_capacity=64))
        return comm.seen

    linear, circular = into_zero("alltoall=linear"), into_zero("alltoall=circular")
    assert circular == [1] * 7                      # one message at a time into rank 0
    assert sorted(linear) == list(range(1, 8))      # all seven pile up on its link


def test_gather_into_one_node_is_limited_by_its_link():
    """n-1 messages of s bytes into the root share its link: with bandwidth
    shared among contenders the k-th takes k s/W, so the root finishes at
    (n-1) s/W, while the same messages between distinct pairs take s/W."""
    s, w, n = 1 << 20, 1e8, 8
    comm = Hockney(latency=0.0, bandwidth=w, share_bandwidth=True)
    wide = Topology(backplane_capacity=64)
    gather = run("MPI_Gather", n, spec="gather=linear-any-order", size=s, comm=comm,
                 topology=wide).collectives[0].completion
    assert gather[0] == pytest.approx((n - 1) * s / w)
    assert gather[1:].max() == 0.0                        # senders' Isends are eager
    pairs = run("MPI_Alltoall", 2, spec="alltoall=circular", size=s, comm=comm,
                topology=wide).collectives[0].completion
    assert pairs.max() == pytest.approx(s / w)


def test_hardware_barrier_in_the_engine_waits_for_the_last_rank():
    """Ranks enter at 0, 1, 2, 3 s: all leave one network time after the last."""
    b = ModelBuilder()
    b.serial("procnum")
    b.collective("MPI_Barrier")
    machine = Machine(Constant(latency=T_S), collectives=CollectiveConfig(hardware=True))
    result = simulate(b.build(), 4, machine)
    assert list(result.collectives[0].completion) == [3.0 + T_S] * 4
    assert [r.finish for r in result.ranks] == [3.0 + T_S] * 4
    assert [(r.compute, r.waiting, r.communication) for r in result.ranks] == \
        [(float(k), 3.0 - k, T_S) for k in range(4)]


def test_measured_collective_in_the_engine_samples_the_distribution():
    import scipy.stats as st

    from pevpm.vm.kernel.collectives import DistributionTimes

    b = ModelBuilder()
    with b.loop(200):
        b.collective("MPI_Alltoall", 64)
    cfg = CollectiveConfig(library="measured",
                           measured=DistributionTimes({"MPI_Alltoall": st.uniform(1.0, 1.0)}))
    result = simulate(b.build(), 4, Machine(Constant(latency=T_S), collectives=cfg),
                      rng=np.random.default_rng(7))
    per_call = np.array([c.completion for c in result.collectives])
    starts = np.concatenate(([0.0], per_call.max(axis=1)[:-1]))
    waited = per_call - starts[:, None]
    assert ((waited >= 1.0) & (waited <= 2.0)).all()
    assert waited.mean() == pytest.approx(1.5, abs=0.03)      # 800 draws: se 0.01


def test_timed_collective_missing_a_rank_is_a_deadlock():
    from pevpm.errors import DeadlockError

    b = ModelBuilder()
    with b.on_ranks("procnum != 2"):
        b.collective("MPI_Barrier")
    machine = Machine(Constant(latency=T_S), collectives=CollectiveConfig(hardware=True))
    with pytest.raises(DeadlockError, match="MPI_Barrier"):
        simulate(b.build(), 3, machine)


def _random_bcasts(spec, eager_limit, runs=80, seed=3):
    import scipy.stats as st

    from pevpm.machine.comm_models import PerSizeDistribution

    comm = PerSizeDistribution({128: st.invgamma(8, loc=50e-6, scale=70e-6)},
                               local=st.uniform(15e-6, 5e-6))
    b = ModelBuilder()
    b.collective("MPI_Bcast", 128, root=0)
    machine = Machine(comm, eager_limit=eager_limit, collectives=CollectiveConfig.parse(spec))
    rng = np.random.default_rng(seed)
    return np.array([simulate(b.build(), 16, machine, rng=rng).collectives[0].completion
                     for _ in range(runs)])


def test_random_times_keep_the_pascal_signature_with_mpich_order_and_eager_isends():
    """t_s ~ Pearson V (mean 60 us, sd ~4 us), t_lc ~ U(15, 20) us: in (nearly)
    every call the ranks finish in popcount order (groups 1:4:6:4:1), root first."""
    times = _random_bcasts("library=mpich-1.2", EAGER)
    popcount = np.array([r.bit_count() for r in range(16)])
    ordered = [np.all(np.diff(popcount[np.argsort(call)]) >= 0) for call in times]
    assert np.mean(ordered) >= 0.95                     # seed 3: all 80 calls
    assert np.all(times.argmin(axis=1) == 0)
    means = [times[:, popcount == k].mean() for k in range(5)]
    spacing = np.diff(means)
    assert np.all((spacing > 35e-6) & (spacing < 50e-6))     # ~ t_s - t_lc = 42.5 us


def test_random_times_without_eager_isends_tie_the_root_with_its_last_child():
    times = _random_bcasts("library=mpich-1.2", 0, runs=15)
    assert np.array_equal(times[:, 0], times[:, 1])


def test_hardware_bcast_in_the_engine_uses_the_placement():
    """2 nodes x 2 ranks: root after its local completion, its node-mate after
    one intra-node copy, the other node's first rank after one network time,
    its node-mate after both."""
    comm = Hockney(latency=1.0, bandwidth=1e12, intra_latency=0.25, local=0.125)
    b = ModelBuilder()
    b.collective("MPI_Bcast", 0, root=0)
    machine = Machine(comm, Topology(procs_per_node=2), collectives=CollectiveConfig(hardware=True))
    done = simulate(b.build(), 4, machine).collectives[0].completion
    assert list(done) == [0.125, 0.25, 1.0, 1.25]
