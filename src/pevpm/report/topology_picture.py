"""A picture of a network with the ranks on it (``pevpm machine show -o``).

Nodes are dots shaded by how many ranks run on them (hollow: none),
switches and routers squares, cables lines; a torus is drawn as its grid
(3-D: one slice beside the next) without the wraparound cables.

>>> import tempfile, os
>>> from pevpm.machine.topology.fattree import FatTree
>>> from pevpm.machine.topology.placement import Placement
>>> tree = FatTree.k_ary(4, 2)
>>> path = draw_network(tree, Placement([0, 1, 2, 3], tree),
...                     os.path.join(tempfile.mkdtemp(), "tree.png"))
>>> path.stat().st_size > 0
True
"""

from __future__ import annotations

from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.machine.topology.network import Network
from pevpm.machine.topology.placement import Placement
from pevpm.machine.topology.summary import layout
from pevpm.report.pyplot import plt, save

#: Largest side of the picture, inches.
MAX_SIZE_INCHES = 16.0


def draw_network(net: Network, placed: Placement | None, path) -> Path:
    """Write the picture of ``net`` (ranks from ``placed``) to ``path`` (PNG, SVG, PDF)."""
    from matplotlib.collections import LineCollection

    positions, cables, hosts = layout(net)
    xs = [x for x, _ in positions.values()]
    ys = [y for _, y in positions.values()]
    span_x = max(xs) - min(xs) or 1.0
    span_y = max(ys) - min(ys) or 1.0
    width = min(MAX_SIZE_INCHES, max(6.0, span_x / max(span_y, 1.0) * 5))
    fig, ax = plt.subplots(figsize=(width, min(MAX_SIZE_INCHES, max(4.0, width * span_y /
                                                                   span_x))))
    segments = [(positions[a], positions[b]) for a, b in cables]
    ax.add_collection(LineCollection(segments, colors="0.6",
                                     linewidths=0.8 if len(segments) < 2000 else 0.3))
    ranks = placed.per_node if placed is not None else {}
    most = max(ranks.values(), default=1)
    node_xy = [positions[v] for v in hosts]
    shades = [ranks.get(k, 0) for k in hosts.values()]
    ax.scatter([x for x, _ in node_xy], [y for _, y in node_xy], c=shades, cmap="viridis",
               vmin=0, vmax=most, s=_size(len(node_xy)), edgecolors="black", linewidths=0.4,
               zorder=3)
    others = [xy for v, xy in positions.items() if v not in hosts]
    if others:
        ax.scatter([x for x, _ in others], [y for _, y in others], marker="s", color="0.3",
                   s=_size(len(others)) * 1.5, zorder=2)
    title = f"{net.kind} {net.params}".strip()
    if placed is not None:
        title += f": {len(placed.node_of)} ranks, {placed.how} placement"
    ax.set_title(title)
    ax.set_axis_off()
    ax.autoscale_view()
    if ranks:
        mappable = ax.collections[1]
        fig.colorbar(mappable, ax=ax, shrink=0.6, label="ranks on the node")
    return save(fig, path)


def placement_picture(topology: str, how: str, node_of: list[int], path) -> tuple[Path, str]:
    """Draw the network ``topology`` names (a ``--topology`` value) with rank r
    on node ``node_of[r]``; the picture's path and the placement's one-line
    description.  A topology file must still be where it was.

    >>> import tempfile, os
    >>> path, text = placement_picture("torus:4x4", "cyclic", [0, 1, 2, 3, 0],
    ...                                os.path.join(tempfile.mkdtemp(), "torus.png"))
    >>> text.split("; ")[-1]
    'cyclic placement: 5 ranks on 4 nodes, up to 2 per node'
    """
    from pevpm.machine.topology.parse import parse_topology

    net = parse_topology(topology)
    if node_of and not 0 <= min(node_of) <= max(node_of) < net.nodes:
        raise PevpmError(f"a rank on node {max(node_of)}, but the network has {net.nodes} "
                         "nodes", topology)
    placed = Placement(list(node_of), net, how=how)
    return draw_network(net, placed, path), placed.describe()


def _size(count: int) -> float:
    return max(4.0, min(80.0, 4000.0 / max(count, 1)))
