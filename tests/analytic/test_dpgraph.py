import numpy as np
import pytest

from pevpm.analytic import LinearCost, Message, SendModeCost, TimingGraph, fit_send_mode
from pevpm.errors import AnalyticError

# Li et al., Table 2 (cluster 1): message sizes in integers and mean times in seconds
SIZES = np.array([100, 250, 400, 550, 700, 850, 1000]) * 1000
STANDARD_SENDER = [0.0385, 0.0990, 0.1611, 0.2223, 0.2839, 0.3463, 0.4076]
STANDARD_RECEIVER = [0.0484, 0.1178, 0.1881, 0.2588, 0.3294, 0.4007, 0.4723]
BUFFERED_SENDER = [0.0067, 0.0168, 0.0266, 0.0375, 0.0485, 0.0578, 0.0690]
BUFFERED_RECEIVER = [0.0484, 0.1178, 0.1876, 0.2592, 0.3308, 0.3989, 0.4707]


@pytest.mark.parametrize("sender, receiver, table3", [
    (STANDARD_SENDER, STANDARD_RECEIVER, ((4.10604e-07, -0.0031578), (4.7111e-07, 0.0002422))),
    (BUFFERED_SENDER, BUFFERED_RECEIVER, ((6.92293e-08, -0.0005128), (4.69539e-07, 0.0008028))),
])
def test_least_squares_reproduces_the_papers_table_3(sender, receiver, table3):
    model = fit_send_mode(SIZES, sender, receiver)
    for cost, (slope, intercept) in zip((model.sender, model.receiver), table3):
        assert cost.per_element == pytest.approx(slope, rel=1e-3)
        assert cost.latency == pytest.approx(intercept, abs=5e-5)


def test_fit_is_exact_on_a_line():
    cost = fit_send_mode([10, 20, 40], [1.2, 2.2, 4.2], [0.5, 0.5, 0.5])
    assert (cost.sender.per_element, cost.sender.latency) == pytest.approx((0.1, 0.2))
    assert (cost.receiver.per_element, cost.receiver.latency) == pytest.approx((0.0, 0.5))


def test_execution_time_is_max_over_nodes_of_summed_times():
    comm = {"standard": SendModeCost(LinearCost(1e-6, 1e-3), LinearCost(2e-6, 2e-3)),
            "buffered": SendModeCost(LinearCost(1e-7, 0.0), LinearCost(2e-6, 0.0))}
    graph = TimingGraph(
        {"0": [0.5, 0.25], "1": [0.25], "2": [0.125, 0.125]},
        [Message("0", "1", 1000, "standard"), Message("2", "1", 5000, "buffered"),
         Message("1", "0", 2000)])
    times = graph.node_times(comm)
    assert times["0"] == pytest.approx(0.75 + 0.002 + 0.006)
    assert times["1"] == pytest.approx(0.25 + 0.004 + 0.01 + 0.003)
    assert times["2"] == pytest.approx(0.25 + 0.0005)
    assert graph.execution_time(comm) == pytest.approx(max(times.values()))


def test_negative_intercept_is_clamped_for_tiny_messages():
    assert LinearCost(4.1e-7, -0.00316).time([0, 10_000]).tolist() == pytest.approx([0.0, 0.00094])


@pytest.mark.parametrize("build, message", [
    (lambda: TimingGraph({"0": [-1.0]}), "segment time must be >= 0"),
    (lambda: TimingGraph({"0": [1.0]}, [Message("0", "7", 10)]), "unknown node '7'"),
    (lambda: TimingGraph({"0": [1.0]}, [Message("0", "0", 10)]), "sends to itself"),
    (lambda: TimingGraph({"0": [], "1": []}, [Message("0", "1", -1)]), "negative size"),
    (lambda: TimingGraph({"0": [], "1": []}, [Message("0", "1", 5, "ready")]).execution_time({}),
     "no cost model for send mode 'ready'"),
    (lambda: fit_send_mode([5, 5], [1.0, 2.0], [1.0, 2.0]), "two distinct message sizes"),
    (lambda: fit_send_mode([5, 6], [1.0], [1.0, 2.0]), "2 message sizes but 1 times"),
])
def test_invalid_graphs_are_clear_errors(build, message):
    with pytest.raises(AnalyticError, match=message):
        build()
