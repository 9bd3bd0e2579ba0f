"""pevpm's routes against SimGrid's, link by link, on the same platform files.

Builds benchmarks/smpi/routes.cpp against libsimgrid (Debian's
libsimgrid-dev), asks SimGrid for the route between every ordered pair of
hosts of each platform in tests/machine/data/simgrid/, translates SimGrid's
link names into pevpm's and compares with the routes pevpm computes from the
same file.  Prints, per platform, the pairs compared and how many differ;
``--write`` also stores SimGrid's routes (in pevpm's link names) beside the
platforms as NAME.routes, which tests/machine/test_simgrid_routes.py checks
without SimGrid.

    PYTHONPATH=src python benchmarks/topology_routes_vs_simgrid.py
    PYTHONPATH=src python benchmarks/topology_routes_vs_simgrid.py --write
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pevpm.machine.topology.simgrid import read_platform

HERE = Path(__file__).resolve().parent
PLATFORMS = HERE.parent / "tests" / "machine" / "data" / "simgrid"


def simgrid_routes(binary: Path, platform: Path) -> list[list[str]]:
    out = subprocess.run([str(binary), str(platform)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split() for line in out.splitlines()]


def translator(net) -> callable:
    """SimGrid link name -> pevpm link name, for the kind of ``net``."""
    names = set(net.link_names)
    kind = net.kind
    if kind == "dragonfly":
        return _by_creation_order(net)
    if kind == "fat-tree":
        return _fat_tree(net)

    def plain(name: str) -> str:
        if m := re.fullmatch(r".*_link_(\d+)_limiter", name):
            return f"limiter {_index(net, m.group(1))}"
        if kind == "torus" and (m := re.fullmatch(r".*_link_from_(\d+)_to_(\d+)_(UP|DOWN)", name)):
            a, b, way = m.groups()
            found = [n for n in names if n.startswith(f"{a}-{b} d") and
                     n.endswith(way.lower())]
            return found[0] if len(found) == 1 else f"?{name}"
        if m := re.fullmatch(r".*_link_(\d+)_(UP|DOWN)", name):
            return f"{m.group(2).lower()} {_index(net, m.group(1))}"
        if name.endswith("_backbone"):
            return "backplane"
        return name if name in names else f"?{name}"
    return plain


def _index(net, radical: str) -> int:
    """Node index of the host whose name holds ``radical``."""
    for i, host in enumerate(net.host_names):
        if re.search(rf"\D{radical}\D*$", host):
            return i
    raise KeyError(radical)


def _fat_tree(net):
    total = net.nodes
    offsets = [0]
    for count in net.per_level[1:]:
        offsets.append(offsets[-1] + count)

    def sim_id(level: int, position: int) -> int:
        return position if level == 0 else 2 * total - 1 - (offsets[level - 1] + position)

    table: dict[tuple[int, int, str], list[str]] = {}
    for name in net.link_names:
        m = re.fullmatch(r"(up|down) (\d+):(\d+)>(\d+):(\d+)(?:#(\d+))?", name)
        if m:
            way, l1, p1, l2, p2, _ = m.groups()
            child, parent = ((int(l1), int(p1)), (int(l2), int(p2))) if way == "up" else \
                ((int(l2), int(p2)), (int(l1), int(p1)))
            key = (sim_id(*child), sim_id(*parent), way.upper())
            table.setdefault(key, []).append(name)
    uniq: dict[tuple[int, int], list[int]] = {}

    switch_of = {sim_id(level, pos): (level, pos) for level in range(1, len(net.per_level))
                 for pos in range(net.per_level[level])}

    def translate(name: str) -> str:
        if m := re.fullmatch(r".*_link_(\d+)_limiter", name):
            k = int(m.group(1))
            level, pos = (0, _index(net, m.group(1))) if k < total else switch_of[k]
            return f"limiter {level}:{pos}"
        m = re.fullmatch(r"link_from_(\d+)_(\d+)_(\d+)_(UP|DOWN)", name)
        if not m:
            return f"?{name}"
        child, parent, u, way = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
        cables = sorted(table[(child, parent, way)], key=lambda n: int(n.partition("#")[2] or 0))
        seen = uniq.setdefault((child, parent), [])
        return cables[sorted(seen).index(u)] if u in seen else f"?{name}"

    translate.uniq = uniq          # filled from all SimGrid names first (see compare)
    return translate


def _by_creation_order(net):
    cables = [n for n in net.link_names if not n.startswith(("mem ", "limiter "))]
    order: dict[str, str] = {}

    def prepare(all_names: set[str]) -> None:
        wires = sorted({re.sub(r"_(UP|DOWN)$", "", n) for n in all_names
                        if n.endswith(("_UP", "_DOWN"))},
                       key=lambda n: int(n.rsplit("_", 1)[1]))
        for i, wire in enumerate(wires):
            order[f"{wire}_UP"], order[f"{wire}_DOWN"] = cables[2 * i], cables[2 * i + 1]

    def translate(name: str) -> str:
        if m := re.fullmatch(r".*_link_(\d+)_limiter", name):
            k = int(m.group(1))
            return f"limiter node {k}" if k < net.nodes else \
                f"limiter r{2 * net.nodes - 1 - k}"
        return order.get(name, f"?{name}")

    translate.prepare = prepare
    return translate


def compare(binary: Path, platform: Path, write: bool) -> tuple[int, int]:
    net = read_platform(str(platform))
    rows = simgrid_routes(binary, platform)
    translate = translator(net)
    every = {name for row in rows for name in row[2:]}
    if hasattr(translate, "prepare"):
        translate.prepare(every)
    if hasattr(translate, "uniq"):
        for name in every:
            if m := re.fullmatch(r"link_from_(\d+)_(\d+)_(\d+)_UP", name):
                translate.uniq.setdefault((int(m.group(1)), int(m.group(2))), []).append(
                    int(m.group(3)))
    index = {name: i for i, name in enumerate(net.host_names)}
    differ, lines = 0, []
    for src, dst, *links in rows:
        a, b = index[src], index[dst]
        theirs = [translate(n) for n in links]
        ours = [net.link_names[i] for i in net.node_route(a, b)] if a != b else []
        if a != b and theirs != ours:
            differ += 1
            if differ <= 3:
                print(f"  {src} -> {dst}\n    simgrid: {theirs}\n    pevpm:   {ours}")
        if a != b:
            lines.append(f"{a} {b} " + " | ".join(theirs))
    if write:
        (platform.with_suffix(".routes")).write_text("\n".join(lines) + "\n")
    return len(lines), differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="store SimGrid's routes as NAME.routes beside the platforms")
    args = parser.parse_args()
    if shutil.which("g++") is None:
        print("needs g++ and libsimgrid-dev", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "routes"
        subprocess.run(["g++", "-O1", "-o", str(binary), str(HERE / "smpi" / "routes.cpp"),
                        "-lsimgrid"], check=True)
        bad = 0
        for platform in sorted(PLATFORMS.glob("*.xml")):
            pairs, differ = compare(binary, platform, args.write)
            bad += differ
            print(f"{platform.name}: {pairs} routes compared, {differ} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
