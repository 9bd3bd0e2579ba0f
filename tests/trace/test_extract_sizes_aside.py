"""Sizes set aside (pevpm.trace.extract.compress.compressed) at a smaller count
only where the largest count set them aside: LAMMPS's quiet traces, whose
2-rank programs halved with their sizes aside and whose 4-rank ones did not,
were cut into loops of different things at the two counts.  And, where sizes
were set aside, every receive takes the largest of them."""

from pevpm.trace.events import Call, Recv, Send, Trace
from pevpm.trace.extract.extract import extract


def ring(numprocs: int, steps: int, tagged: bool) -> Trace:
    """Each rank computes, sends to its right and receives from its left, a size of
    its own each step (and, where ``tagged``, a tag of its own too)."""
    def rank(me):
        right, left = (me + 1) % numprocs, (me - 1) % numprocs
        calls, t = [Call("MPI_Init", 0, 0)], 0.0
        for k in range(steps):
            tag, size = (k if tagged else 0), 8 * (k + 1)
            calls += [Call("MPI_Send", t + 0.001, t + 0.0011, (Send(right, tag, size),)),
                      Call("MPI_Recv", t + 0.0012, t + 0.0013, (Recv(left, tag, size),))]
            t += 0.0013
        return tuple(calls + [Call("MPI_Finalize", t + 0.001, t + 0.002)])
    return Trace(tuple(rank(r) for r in range(numprocs)))


def test_a_smaller_count_keeps_its_sizes_where_the_largest_kept_them():
    # 4 ranks: a tag each step, so setting sizes aside leaves the program as long
    kept = extract([ring(4, 60, tagged=True), ring(2, 60, tagged=False)], "ring")
    assert ("the 2-rank programs keep their message sizes, though setting them aside "
            "would halve them, as the larger count's long programs kept theirs: so that "
            "the counts' loops are cut alike") in kept.notes
    assert not any(n.startswith("APPROXIMATE") for n in kept.notes)
    # alone, or under a largest count that set its sizes aside, it sets them aside
    for traces in ([ring(2, 60, tagged=False)],
                   [ring(4, 60, tagged=False), ring(2, 60, tagged=False)]):
        loose = extract(traces, "ring")
        assert any(n.startswith("APPROXIMATE") for n in loose.notes)
        assert not any("keep their message sizes" in n for n in loose.notes)


def test_a_receive_holds_the_largest_size_set_aside_anywhere():
    # CoMD's node traces: ranks whose sizes varied sent their mean (28,644 B) to a
    # neighbour whose same exchange kept its traced 28,616 B: truncated at 4 ranks
    from pevpm.trace.extract.extract import _Writer

    writer = _Writer([], [], set(), {}, {})
    writer.largest = {2: 0, 4: 28672}
    assert writer.buffer("28616") == "28672"
    assert writer.buffer("100000") == "100000"
    assert writer.buffer("8 * numprocs") == "max(8 * numprocs, 28672)"
    writer.largest = {2: 0, 4: 0}       # no sizes set aside: every size as traced
    assert writer.buffer("28616") == "28616"


def test_a_model_with_sizes_aside_says_its_receives_take_the_largest():
    # the ring's receives vary too: the largest message, 8 * 60 B
    model = extract([ring(4, 60, tagged=False), ring(2, 60, tagged=False)], "ring")
    assert "b.message('MPI_Recv', 480," in model.text
    assert any("every receive's buffer is at least the largest of them" in n
               for n in model.notes)
