"""The contention lab: namespaces and shaped links appear, carry the traffic, and go away."""

import subprocess

import pytest

from pevpm.errors import PevpmError
from pevpm.validate.calibration import load_example
from pevpm.validate.lab import MPI_OVER_TCP, ContentionLab, NamespaceLauncher, lab_available
from pevpm.validate.runner import run_once

AVAILABLE, WHY_NOT = lab_available()
needs_lab = pytest.mark.skipif(not AVAILABLE, reason=f"contention lab unavailable: {WHY_NOT}")


def namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return {line.split()[0] for line in listed.splitlines() if line.strip()}


def test_launcher_places_ranks_on_nodes_in_blocks():
    launcher = NamespaceLauncher(["a", "b", "c"], ranks_per_node=2)
    assert launcher.command("mpiexec", 5, ["py", "p.py"]) == [
        "mpiexec", "-n", "2", "ip", "netns", "exec", "a", "py", "p.py",
        ":", "-n", "2", "ip", "netns", "exec", "b", "py", "p.py",
        ":", "-n", "1", "ip", "netns", "exec", "c", "py", "p.py"]
    assert launcher.env == MPI_OVER_TCP
    with pytest.raises(PevpmError, match="7 ranks at 2 per node need 4 nodes; the lab has 3"):
        launcher.command("mpiexec", 7, ["py"])


@pytest.mark.parametrize("options, message", [
    ({"nodes": 0}, "at least one node"),
    ({"nodes": 2, "rate": "fast"}, "not a tc rate"),
    ({"nodes": 2, "burst": "lots"}, "not a tc size"),
])
def test_bad_lab_options_are_refused(options, message):
    with pytest.raises(PevpmError, match=message):
        ContentionLab(**options)


@needs_lab
def test_lab_shapes_each_link_and_leaves_nothing_behind():
    before = namespaces()
    with pytest.raises(RuntimeError, match="body failed"), \
            ContentionLab(nodes=2, rate="80mbit") as lab:
        assert {lab.switch, *lab.namespaces} <= namespaces()
        shown = subprocess.run(["ip", "netns", "exec", lab.namespaces[0], "tc", "qdisc", "show",
                                "dev", "eth0"], capture_output=True, text=True, check=False)
        assert "tbf" in shown.stdout and "rate 80Mbit" in shown.stdout
        raise RuntimeError("body failed")
    assert namespaces() == before


@needs_lab
@pytest.mark.mpi
def test_bag_of_tasks_traffic_crosses_the_masters_shaped_link():
    args = ["--jobs", "24", "--max-compute", "0.001", "--compute", "sleep", "--seed", "2"]
    jobs = load_example("bag_of_tasks").job_stream(24, 65536, 0.001, 2)
    with ContentionLab(nodes=3, rate="200mbit") as lab:
        record = run_once("bag_of_tasks", 3, args, launcher=lab.launcher())
        links = [lab.link_bytes(node) for node in range(3)]
    assert sum(record["extra"]["jobs_per_worker"]) == 24
    # every job's input left the master over its link, every output came back over it
    assert links[0]["out"] >= jobs[:, 0].sum()
    assert links[0]["in"] >= jobs[:, 2].sum()
    # and the workers' links carried those bytes on the other side
    assert links[1]["in"] + links[2]["in"] >= jobs[:, 0].sum()
