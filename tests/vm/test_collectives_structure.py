"""Engine-free checks of every collective algorithm's message structure.

For every family, algorithm, rank count and root: the sends of all ranks
match the receives one for one, in the same order per (source,
destination, tag) with the same sizes; every request is waited for; and the
ranks complete under eager (buffered) sends.  Plus the data volumes the
thesis describes.
"""

from collections import Counter, defaultdict

import pytest

from pevpm.errors import ModelError
from pevpm.model.ast import Message, Serial
from pevpm.model.expr import ANY_TAG, PROC_NULL
from pevpm.vm.kernel.collectives import (
    ALGORITHMS,
    COLLECTIVE_TAG_BASE,
    REQUEST_PREFIX,
    CollectiveConfig,
    expand,
)

OP_OF = {"barrier": "MPI_Barrier", "bcast": "MPI_Bcast", "scatter": "MPI_Scatter",
         "gather": "MPI_Gather", "allgather": "MPI_Allgather", "alltoall": "MPI_Alltoall",
         "reduce": "MPI_Reduce", "allreduce": "MPI_Allreduce",
         "reduce_scatter": "MPI_Reduce_scatter", "scan": "MPI_Scan"}
POW2_ONLY = {("allgather", "recursive-doubling")}


def value(expr):
    return expr.evaluate({})


def scripts(op, family, algorithm, size, root, n, **options):
    cfg = CollectiveConfig.parse([f"{family}={algorithm}"] + [f"{k}={v}" for k, v in
                                                              options.items()])
    return [expand(op, size, root, rank, n, cfg) for rank in range(n)]


def messages(rank, statements):
    """(kind, src, dst, tag, size) per point-to-point message end, program order."""
    ends = []
    for m in statements:
        if not isinstance(m, Message):
            continue
        if m.op in ("MPI_Isend", "MPI_Send"):
            assert value(m.src) == rank
            ends.append(("send", rank, value(m.dst), value(m.tag), value(m.size)))
        elif m.op in ("MPI_Irecv", "MPI_Recv"):
            assert value(m.dst) == rank
            ends.append(("recv", value(m.src), rank, value(m.tag), value(m.size)))
        elif m.op == "MPI_Sendrecv":
            ends.append(("send", rank, value(m.dst), value(m.tag), value(m.size)))
            ends.append(("recv", value(m.src), rank, value(m.tag), value(m.recv_size)))
    return ends


def check_matching(all_statements):
    by_channel = {"send": defaultdict(list), "recv": defaultdict(list)}
    for rank, statements in enumerate(all_statements):
        for kind, src, dst, tag, size in messages(rank, statements):
            assert src != dst, f"rank {rank} messages itself"
            assert tag <= COLLECTIVE_TAG_BASE and tag not in (ANY_TAG, PROC_NULL)
            by_channel[kind][(src, dst, tag)].append(size)
    assert by_channel["send"] == by_channel["recv"]
    return by_channel["send"]


def check_requests(statements):
    started, waited = [], []
    for m in statements:
        if isinstance(m, Message) and m.request:
            assert m.request.startswith(REQUEST_PREFIX)
            started.append(m.request)
        if isinstance(m, Message) and m.op == "MPI_Waitall":
            waited.extend(m.requests)
    assert sorted(started) == sorted(waited) and len(set(started)) == len(started)


def completes_with_eager_sends(all_statements):
    """Run the scripts without time: sends never block, receives (and Waitalls
    on receives) wait for a matching send posted earlier."""
    n = len(all_statements)
    pc = [0] * n
    posted = Counter()          # (src, dst, tag) -> sends posted not yet received
    pending = [{} for _ in range(n)]   # request -> channel of an Irecv
    progress = True
    while progress:
        progress = False
        for rank in range(n):
            while pc[rank] < len(all_statements[rank]):
                m = all_statements[rank][pc[rank]]
                if isinstance(m, Serial):
                    pass
                elif m.op in ("MPI_Isend", "MPI_Send"):
                    posted[(rank, value(m.dst), value(m.tag))] += 1
                elif m.op == "MPI_Irecv":
                    pending[rank][m.request] = (value(m.src), rank, value(m.tag))
                elif m.op == "MPI_Recv":
                    channel = (value(m.src), rank, value(m.tag))
                    if not posted[channel]:
                        break
                    posted[channel] -= 1
                elif m.op == "MPI_Sendrecv":
                    send = (rank, value(m.dst), value(m.tag))
                    if pending[rank].get("sendrecv") != send:
                        posted[send] += 1
                        pending[rank]["sendrecv"] = send
                    channel = (value(m.src), rank, value(m.tag))
                    if not posted[channel]:
                        break
                    posted[channel] -= 1
                    del pending[rank]["sendrecv"]
                elif m.op == "MPI_Waitall":
                    channels = [pending[rank][r] for r in m.requests if r in pending[rank]]
                    need = Counter(channels)
                    if any(posted[c] < k for c, k in need.items()):
                        break
                    for c, k in need.items():
                        posted[c] -= k
                    for r in m.requests:
                        pending[rank].pop(r, None)
                pc[rank] += 1
                progress = True
    return all(pc[r] == len(all_statements[r]) for r in range(n))


CASES = [(family, algorithm) for family, algos in ALGORITHMS.items() for algorithm in algos]


@pytest.mark.parametrize("family,algorithm", CASES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12, 16])
def test_every_algorithm_matches_and_completes(family, algorithm, n):
    if (family, algorithm) in POW2_ONLY and n & (n - 1):
        with pytest.raises(ModelError, match="power-of-two"):
            scripts(OP_OF[family], family, algorithm, 24, 0, n)
        return
    for root in sorted({0, n // 2, n - 1}):
        for options in ({}, {"child-order": "smallest-first", "acks": "yes"}):
            all_statements = scripts(OP_OF[family], family, algorithm, 24, root, n, **options)
            check_matching(all_statements)
            for statements in all_statements:
                check_requests(statements)
            assert completes_with_eager_sends(all_statements), (family, algorithm, n, root)


def test_v_variants_carry_each_ranks_own_block():
    sizes = [10, 20, 30, 40, 50]
    for family, op in (("scatter", "MPI_Scatterv"), ("gather", "MPI_Gatherv")):
        for algorithm in ("linear", "binomial"):
            channels = check_matching(scripts(op, family, algorithm, sizes, 2, 5))
            at_root = sum(sum(v) for (s, d, t), v in channels.items() if 2 in (s, d))
            assert at_root == sum(sizes) - sizes[2]   # the root keeps its own block
            if algorithm == "linear":
                assert sorted(v[0] for v in channels.values()) == [10, 20, 40, 50]


def test_binomial_scatter_halves_the_data_each_level():
    channels = check_matching(scripts("MPI_Scatter", "scatter", "binomial", 1, 0, 16))
    assert {(s, d): v[0] for (s, d, t), v in channels.items() if s == 0} == \
        {(0, 8): 8, (0, 4): 4, (0, 2): 2, (0, 1): 1}
    assert sum(sum(v) for v in channels.values()) == 32   # log2(16)/2 * 16 blocks


def test_linear_alltoall_everyone_sends_to_rank_zero_first():
    for rank, statements in enumerate(scripts("MPI_Alltoall", "alltoall", "linear", 8, 0, 6)):
        sends = [value(m.dst) for m in statements if m.op == "MPI_Isend"]
        assert sends == [r for r in range(6) if r != rank]


def test_bruck_alltoall_uses_log_steps_of_half_the_blocks():
    statements = scripts("MPI_Alltoall", "alltoall", "bruck", 100, 0, 16)[3]
    assert [(value(m.dst), value(m.size)) for m in statements] == \
        [(4, 800), (5, 800), (7, 800), (11, 800)]


def test_circular_alltoall_is_n_minus_one_exchanges():
    statements = scripts("MPI_Alltoall", "alltoall", "circular", 8, 0, 5)[1]
    assert [(value(m.dst), value(m.src)) for m in statements] == [(2, 0), (3, 4), (4, 3), (0, 2)]


def test_bcast_child_order_and_acknowledgements():
    root = scripts("MPI_Bcast", "bcast", "binomial", 8, 0, 8)[0]
    assert [value(m.dst) for m in root if m.op == "MPI_Isend"] == [4, 2, 1]
    root = scripts("MPI_Bcast", "bcast", "binomial", 8, 0, 8,
                   **{"child-order": "smallest-first", "acks": "yes"})[0]
    assert [(m.op, value(m.dst)) for m in root if m.op != "MPI_Waitall"] == \
        [("MPI_Isend", 1), ("MPI_Isend", 2), ("MPI_Isend", 4),
         ("MPI_Recv", 0), ("MPI_Recv", 0), ("MPI_Recv", 0)]


def test_reduction_operator_cost_is_charged_per_received_buffer():
    statements = scripts("MPI_Reduce", "reduce", "binomial", 1000, 0, 8,
                         **{"reduce-cost": 1e-9})[0]
    costs = [m.time.evaluate({}) for m in statements if isinstance(m, Serial)]
    assert costs == pytest.approx([1e-6] * 3)
    assert not any(isinstance(m, Serial) for m in scripts("MPI_Reduce", "reduce", "binomial",
                                                          1000, 0, 8)[0])


def test_expansions_are_memoised():
    cfg = CollectiveConfig.parse("library=mpich-1.2")
    assert expand("MPI_Bcast", 64, 0, 3, 16, cfg) is expand("MPI_Bcast", 64, 0, 3, 16,
                                                             CollectiveConfig.parse(
                                                                 "library=mpich-1.2"))
