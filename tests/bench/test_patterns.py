import pytest

from pevpm.bench.patterns import Placement, complement_partners, select_placements
from pevpm.errors import BenchmarkError


def test_placement_from_hosts_and_ppn():
    place = Placement.from_hosts(["a", "b", "a", "b"])
    assert place.nodes == [0, 1, 0, 1] and place.nxp == "2x2"
    assert place.local_rank(2) == 1
    assert Placement.from_hosts(["h"] * 6, ppn=2).nxp == "3x2"


def test_unequal_hosts_are_refused():
    with pytest.raises(BenchmarkError, match="different numbers"):
        Placement.from_hosts(["a", "a", "b"])


def test_complement_pairs_cross_nodes_first_half_pings():
    place = Placement.from_hosts(["n0"] * 2 + ["n1"] * 2 + ["n2"] * 2 + ["n3"] * 2)
    partners = complement_partners(place)
    assert partners[:4] == [(4, True), (5, True), (6, True), (7, True)]
    assert partners[4:] == [(0, False), (1, False), (2, False), (3, False)]
    for rank, (peer, _) in enumerate(partners):
        assert place.nodes[rank] != place.nodes[peer]


def test_intra_node_pairs_split_the_node():
    partners = complement_partners(Placement.from_hosts(["h"] * 4))
    assert partners == [(2, True), (3, True), (0, False), (1, False)]


def test_odd_node_count_is_refused():
    with pytest.raises(BenchmarkError, match="even number of nodes"):
        complement_partners(Placement.from_hosts(["a", "b", "c"]))


def test_subset_takes_the_first_nodes_and_their_first_ranks():
    place = Placement.from_hosts(["a", "b", "a", "b", "a", "b"])
    sub, ranks = place.subset(2, 2)
    assert ranks == [0, 1, 2, 3] and sub.nxp == "2x2" and sub.nodes == [0, 1, 0, 1]
    sub, ranks = place.subset(1, 3)
    assert ranks == [0, 2, 4] and sub.hosts == ["a", "a", "a"]
    with pytest.raises(BenchmarkError, match="does not fit in this launch's 2x3"):
        place.subset(3, 1)


def test_select_placements_all_explicit_and_default():
    place = Placement.from_hosts(["h"] * 4)
    default = select_placements(place, [], paired=True)
    assert [(p.nxp, ranks) for p, ranks in default] == [("1x4", [0, 1, 2, 3])]
    assert [p.nxp for p, _ in select_placements(place, ["all"], paired=True)] == ["1x2", "1x4"]
    assert [p.nxp for p, _ in select_placements(place, ["all"], paired=False)] == [
        "1x2", "1x3", "1x4"]
    assert [p.nxp for p, _ in select_placements(place, ["1x4", "1x2"], paired=True)] == [
        "1x2", "1x4"]


@pytest.mark.parametrize("requested, message", [
    (["1x3"], "pair processes"),
    (["1x1"], "at least 2 processes"),
    (["2x2"], "does not fit"),
])
def test_select_placements_refusals(requested, message):
    with pytest.raises(BenchmarkError, match=message):
        select_placements(Placement.from_hosts(["h"] * 4), requested, paired=True)
