"""Algorithm sets, thresholds, overrides and timed (hardware / measured) collectives."""

import numpy as np
import pytest
import scipy.stats as st

from pevpm.errors import ModelError, PevpmError
from pevpm.machine.transfer import Transfer
from pevpm.vm.kernel.collectives import (
    CollectiveConfig,
    DistributionTimes,
    HardwareTimes,
    ProfileTimes,
    algorithm_for,
    expand,
    is_timed,
    synchronised_completion,
    timed_completion,
)


def test_mpich_1_2_set_is_what_the_thesis_found():
    cfg = CollectiveConfig.parse("library=mpich-1.2")
    chosen = {op: cfg.algorithm(op, 1 << 16, 32) for op in
              ("MPI_Bcast", "MPI_Barrier", "MPI_Scatter", "MPI_Gatherv", "MPI_Alltoall",
               "MPI_Allgather", "MPI_Allreduce")}
    assert chosen == {"MPI_Bcast": "binomial", "MPI_Barrier": "binomial",
                      "MPI_Scatter": "linear", "MPI_Gatherv": "linear",
                      "MPI_Alltoall": "linear", "MPI_Allgather": "gather-bcast",
                      "MPI_Allreduce": "reduce-bcast"}


@pytest.mark.parametrize("size,n,expected", [
    (12287, 16, "binomial"), (12288, 16, "scatter-allgather"), (1 << 20, 4, "binomial")])
def test_mpich_bcast_threshold(size, n, expected):
    assert algorithm_for("MPI_Bcast", size, n) == expected


@pytest.mark.parametrize("size,n,expected", [
    (256, 8, "bruck"), (256, 4, "scattered"), (257, 8, "scattered"),
    (32768, 8, "scattered"), (32769, 8, "pairwise")])
def test_mpich_alltoall_thresholds(size, n, expected):
    assert algorithm_for("MPI_Alltoall", size, n) == expected


def test_allgather_uses_recursive_doubling_only_on_powers_of_two():
    assert algorithm_for("MPI_Allgather", 64, 16) == "recursive-doubling"
    assert algorithm_for("MPI_Allgather", 64, 12) == "bruck"
    assert algorithm_for("MPI_Allgather", 1 << 16, 12) == "ring"


def test_qsnet_alltoall_switches_at_2k_and_8k_and_is_measured_beyond():
    cfg = CollectiveConfig.parse("library=qsnet")
    assert [cfg.algorithm("MPI_Alltoall", s, 16) for s in (2048, 2049, 8192, 8193)] == \
        ["bruck", "circular", "circular", "measured"]
    assert cfg.algorithm("MPI_Bcast", 8, 16) == "hardware"
    assert cfg.algorithm("MPI_Scan", 8, 16) == "measured"    # unknown: sample the profile


def test_overrides_and_thresholds_win():
    cfg = CollectiveConfig.parse(["bcast=linear", "alltoall_medium=100"])
    assert cfg.algorithm("MPI_Bcast", 8, 64) == "linear"
    assert cfg.algorithm("MPI_Alltoall", 101, 4) == "pairwise"
    assert CollectiveConfig.parse("hardware=yes, barrier=dissemination").algorithm(
        "MPI_Barrier", 0, 8) == "dissemination"
    assert CollectiveConfig.parse("scatter=binomial").algorithm("MPI_Scatterv", 8, 8) == \
        "binomial"


@pytest.mark.parametrize("spec,message", [
    ("bcast=binomal", "unknown bcast algorithm 'binomal'"),
    ("bcats=binomial", "did you mean 'bcast'"),
    ("library=mpich2", "unknown collective algorithm set"),
    ("alltoall=hardware", "unknown alltoall algorithm"),
    ("acks=maybe", "yes or no"),
    ("reduce-cost=-1", ">= 0"),
    ("bcast", "key=value"),
    ("child-order=random", "unknown child order"),
    ("alltoall-throttle=2.5", "whole number"),
    ("alltoall-throttle=-1", ">= 0"),
])
def test_bad_options_are_user_errors(spec, message):
    with pytest.raises(PevpmError, match=message):
        CollectiveConfig.parse(spec)


def test_bad_calls_are_user_errors():
    with pytest.raises(ModelError, match="root 4 is outside 0..3"):
        expand("MPI_Bcast", 8, 4, 0, 4)
    with pytest.raises(ModelError, match="3 entries for 4 ranks"):
        expand("MPI_Scatterv", [1, 2, 3], 0, 0, 4)
    with pytest.raises(ModelError, match="timed whole"):
        expand("MPI_Barrier", 0, 0, 0, 4, CollectiveConfig(hardware=True))


def test_configurations_are_hashable_and_read_only():
    a = CollectiveConfig.parse("bcast=linear")
    assert hash(a) == hash(CollectiveConfig(overrides={"bcast": "linear"})) and a == \
        CollectiveConfig(overrides={"bcast": "linear"})
    with pytest.raises(TypeError):
        a.overrides["bcast"] = "binomial"


def test_configurations_travel_to_worker_processes():
    import pickle

    cfg = CollectiveConfig.parse("bcast=linear, bcast_short=100, acks=yes")
    copy = pickle.loads(pickle.dumps(cfg))
    assert copy == cfg and hash(copy) == hash(cfg)
    assert copy.algorithm("MPI_Bcast", 8, 4) == "linear"


def test_synchronised_start_depends_on_the_data_flow():
    entries = np.array([1.0, 0.0, 3.0])
    offsets = np.array([0.5, 0.5, 0.5])
    assert list(synchronised_completion("MPI_Bcast", 0, entries, offsets)) == [1.5, 1.5, 3.5]
    assert list(synchronised_completion("MPI_Gather", 0, entries, offsets)) == [3.5, 0.5, 3.5]
    assert list(synchronised_completion("MPI_Alltoall", 0, entries, offsets)) == [3.5] * 3


def test_measured_fallback_samples_the_given_distribution():
    """A synthetic measured distribution: N(2 ms, 0.1 ms) per rank."""
    cfg = CollectiveConfig(library="measured",
                           measured=DistributionTimes({"MPI_Alltoall": st.norm(2e-3, 1e-4)}))
    assert is_timed("MPI_Alltoall", 64, 8, cfg)
    rng = np.random.default_rng(42)
    entries = np.linspace(0.0, 1e-3, 8)
    done = np.array([timed_completion("MPI_Alltoall", 64, 0, entries, cfg, rng)
                     for _ in range(2000)])
    assert done.shape == (2000, 8)
    waited = done - entries.max()
    assert waited.mean() == pytest.approx(2e-3, rel=0.01)          # 2000*8 draws: se 0.1%
    assert waited.std() == pytest.approx(1e-4, rel=0.05)
    with pytest.raises(ModelError, match="no measured distribution for MPI_Bcast"):
        timed_completion("MPI_Bcast", 8, 0, entries, cfg, rng)
    with pytest.raises(ModelError, match="no measured distribution was given"):
        timed_completion("MPI_Bcast", 8, 0, entries, CollectiveConfig(library="measured"), rng)


def test_measured_distribution_may_depend_on_size_and_ranks():
    times = DistributionTimes({"MPI_Bcast": lambda size, n: st.uniform(size * 1e-6, 0)})
    offsets = times.sample("MPI_Bcast", 500, root=0, numprocs=3, rng=np.random.default_rng(0))
    assert offsets == pytest.approx([5e-4] * 3)


class _Fixed:
    """Network messages take 10 us (+1 us per KB), intra-node copies 1 us, Isend 0.5 us."""

    def transfer_time(self, t: Transfer, rng):
        return 1e-6 if t.intra_node else 10e-6 + t.size * 1e-9

    def local_completion_time(self, t: Transfer, rng):
        return 0.5e-6

    def bounded(self, which):
        return self


def test_hardware_bcast_is_one_network_time_plus_an_intra_node_copy():
    hw = HardwareTimes(_Fixed(), node_of=lambda rank: rank // 2)      # 4 nodes x 2
    offsets = hw.sample("MPI_Bcast", 1000, root=0, numprocs=8, rng=np.random.default_rng(0))
    assert offsets == pytest.approx([0.5e-6, 1e-6] + [11e-6, 12e-6] * 3)
    barrier = hw.sample("MPI_Barrier", 0, root=0, numprocs=8, rng=np.random.default_rng(0))
    assert barrier == pytest.approx([10e-6, 11e-6] * 4)
    many = HardwareTimes(_Fixed()).sample("MPI_Barrier", 0, root=0, numprocs=64,
                                          rng=np.random.default_rng(0))
    assert many.max() == pytest.approx(10e-6)            # independent of the node count


def test_hardware_collective_through_timed_completion():
    cfg = CollectiveConfig(hardware=True)
    done = timed_completion("MPI_Barrier", 0, None, [0.0, 5e-6, 2e-6, 0.0], cfg,
                            np.random.default_rng(0), comm_model=_Fixed())
    assert done == pytest.approx([15e-6] * 4)


class _FakeProfile:
    """Two bcast blocks on 4 ranks: rank r always took (r + 1) ms at 0 B and
    (r + 1) * 3 ms at 1000 B; one on 8 ranks that must be ignored."""

    class Key:
        def __init__(self, size, n, variant=""):
            self.test, self.variant, self.size, self.n, self.p = "bcast", variant, size, n, 1

    def __init__(self):
        self.keys = [self.Key(1000, 4), self.Key(0, 4), self.Key(0, 8)]

    def blocks(self, test=None):
        return [k for k in self.keys if test in (None, k.test)]

    def samples(self, key, by_rank=False):
        scale = 1 if key.size == 0 else 3
        return np.tile((np.arange(key.n)[:, None] + 1.0) * scale * 1e-3, (1, 5))


def test_profile_times_resample_per_rank_and_interpolate_sizes():
    times = ProfileTimes(_FakeProfile())
    rng = np.random.default_rng(0)
    assert times.sample("MPI_Bcast", 0, root=0, numprocs=4, rng=rng) == \
        pytest.approx([1e-3, 2e-3, 3e-3, 4e-3])
    assert times.sample("MPI_Bcast", 500, root=0, numprocs=4, rng=rng) == \
        pytest.approx([2e-3, 4e-3, 6e-3, 8e-3])
    assert times.sample("MPI_Bcast", 5000, root=0, numprocs=4, rng=rng) == \
        pytest.approx([3e-3, 6e-3, 9e-3, 12e-3])
    assert times.sample("MPI_Bcast", 0, root=2, numprocs=4, rng=rng) == \
        pytest.approx([3e-3, 4e-3, 1e-3, 2e-3])          # the root takes rank 0's times
    with pytest.raises(ModelError, match="no bcast block on 3 ranks"):
        times.sample("MPI_Bcast", 0, root=0, numprocs=3, rng=rng)
    with pytest.raises(ModelError, match="does not measure MPI_Scan"):
        times.sample("MPI_Scan", 0, root=0, numprocs=4, rng=rng)
    import pickle

    copy = pickle.loads(pickle.dumps(times))        # plain data: travels to workers
    assert copy.sample("MPI_Bcast", 0, root=0, numprocs=4, rng=rng) == \
        pytest.approx([1e-3, 2e-3, 3e-3, 4e-3])


def test_coll_command_line_option():
    import argparse

    from pevpm.cli.arguments import add_collective_arguments, collective_config

    parser = argparse.ArgumentParser()
    add_collective_arguments(parser)
    cfg = collective_config(parser.parse_args(["--coll", "library=qsnet",
                                               "--coll", "alltoall=pairwise, reduce-cost=1e-9"]))
    assert cfg.library == "qsnet" and cfg.overrides == {"alltoall": "pairwise"}
    assert cfg.options.reduce_cost_per_byte == 1e-9
    assert collective_config(parser.parse_args([])) == CollectiveConfig()


@pytest.mark.parametrize("library,expected", [
    ("MPICH Version:      5.0.2", "mpich"), ("MPICH Version: 1.2.0", "mpich-1.2"),
    ("MVAPICH2 Version      :\t2.3.7", "mpich"), ("Intel(R) MPI Library 2021.6", "mpich"),
    ("Quadrics MPI (elan)", "qsnet"), ("Open MPI v4.1.5", "measured")])
def test_algorithm_set_chosen_from_the_profiles_mpi_library(library, expected):
    from pevpm.machine.collectives import library_for

    assert library_for(library) == expected


def test_configuration_for_a_profile_samples_it_where_the_algorithm_is_unknown():
    profile = _FakeProfile()
    profile.machine = type("Info", (), {"mpi_library": "Open MPI v4.1.5"})()
    cfg = CollectiveConfig.for_profile(profile, "bcast=binomial")
    assert cfg.algorithm("MPI_Bcast", 8, 4) == "binomial"
    assert cfg.algorithm("MPI_Allgather", 8, 4) == "measured"
    measured = CollectiveConfig.for_profile(profile, "bcast=measured")
    done = timed_completion("MPI_Bcast", 0, 0, np.zeros(4), measured, np.random.default_rng(0))
    assert done == pytest.approx([1e-3, 2e-3, 3e-3, 4e-3])
    with pytest.raises(ModelError, match="no allgather block on 4 ranks"):
        timed_completion("MPI_Allgather", 8, 0, np.zeros(4), cfg, np.random.default_rng(0))
