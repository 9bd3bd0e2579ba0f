"""``pevpm machine list`` and ``new`` (``pevpm fit`` is :mod:`pevpm.cli.fit`).

pevpm machine list                        # presets and built-in profiles, with their origin
pevpm machine new --latency 2us --bandwidth 10GB/s --shape 4 -o hyp.db
pevpm machine show fat-tree:k=4,n=3,oversub=2 -n 32 --placement random -o tree.png
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from pevpm.bench.options import parse_duration, parse_sizes
from pevpm.cli import numbers, outputs
from pevpm.cli.numbers import finite_result
from pevpm.cli.outputs import replacing
from pevpm.cli.paths import writable_file
from pevpm.errors import PevpmError, ProfileError
from pevpm.host import WAIT_STYLES
from pevpm.profile.synthetic import (
    DEFAULT_PLACEMENTS,
    DEFAULT_SIZES,
    HypotheticalMachine,
    parse_bandwidth,
    write_profile,
)


def register(subparsers) -> None:
    machine = subparsers.add_parser("machine")
    actions = machine.add_subparsers(dest="machine_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="machine presets and built-in profiles: what each is, where it was "
                     "measured, what it is good for")
    listing.set_defaults(func=run_machine_list)
    new = actions.add_parser(
        "new",
        help="write a synthetic profile from latency, bandwidth and Pearson V behaviour",
        description="A machine described by a few numbers, written as a profile the virtual "
        "machine uses like a measured one (isend and isendlocal blocks with stored Pearson V fits).",
    )
    new.add_argument("-o", "--output", required=True, type=writable_file,
                     help="profile file to create")
    new.add_argument("--latency", required=True, help="zero-byte latency between nodes, e.g. 2us")
    new.add_argument("--bandwidth", required=True, help="bandwidth between nodes, e.g. 10GB/s")
    new.add_argument("--shape", type=numbers.finite, default=4.0,
                     help="Pearson V shape alone on a link (4)")
    new.add_argument(
        "--spread",
        type=numbers.finite,
        default=0.25,
        help="mean delay over the minimum, as a fraction (0.25)",
    )
    new.add_argument(
        "--contention-exponent",
        type=numbers.finite,
        default=1.0,
        help="mean delay grows as contention^this (1: each message on the link adds as much)",
    )
    new.add_argument(
        "--shape-decay", type=numbers.finite, default=0.5,
        help="shape-1 falls as contention^-this (0.5)"
    )
    new.add_argument("--intra-latency", help="latency within a node (default: --latency)")
    new.add_argument("--intra-bandwidth", help="bandwidth within a node (default: --bandwidth)")
    new.add_argument("--send-overhead", help="time for a non-blocking send to return (latency/4)")
    new.add_argument(
        "--sizes",
        default=",".join(str(s) for s in DEFAULT_SIZES),
        help="message sizes (default %(default)s; K/M suffixes)",
    )
    new.add_argument(
        "--placements",
        default=",".join(DEFAULT_PLACEMENTS),
        help="n x p placements to write (default %(default)s)",
    )
    new.add_argument("--cores", type=numbers.whole(1, 10**6), metavar="C",
                     help="cores per node: more ranks than cores on a node share them "
                          "(default: no limit)")
    new.add_argument("--wait", choices=WAIT_STYLES, default="poll",
                     help="how a rank blocked in MPI waits: poll (keeps its core busy, "
                          "MPICH's default) or sleep (poll)")
    new.add_argument("--samples", type=numbers.whole(1, 10**7), default=2000,
                     help="times per block (2000)")
    new.add_argument("--seed", type=numbers.seed, default=0, help="seed of the sampled times (0)")
    new.add_argument("--name", default="hypothetical", help="machine name")
    new.add_argument("--force", action="store_true", help="replace an existing output file")
    new.set_defaults(func=run_machine_new)
    show = actions.add_parser(
        "show", help="describe a network (levels, links, bandwidths, oversubscription, "
                     "diameter) and draw it with the ranks placed on it",
        description="Print a network's structure and, with -o, draw it with the ranks of "
                    "-n placed on its nodes (docs/topology.md).")
    show.add_argument("topology", metavar="SPEC|FILE",
                      help="fat-tree:k=4,n=3,oversub=4 | torus:8x8x8 | dragonfly:... | "
                           "switch:nodes=N | a SimGrid .xml or pevpm .yaml file")
    show.add_argument("-n", "--procs", type=numbers.whole(1, 10**7), metavar="N",
                      help="ranks to place (default: none, the network alone)")
    show.add_argument("--ppn", type=numbers.procs_per_node, metavar="P",
                      help="ranks per node (1)")
    show.add_argument("--nodes", type=numbers.procs_per_node, metavar="N",
                      help="spread the ranks evenly over N nodes (with --ppn: N nodes of P)")
    show.add_argument("--placement", metavar="HOW",
                      help="block (default), cyclic, random (from --seed) or an mpiexec "
                           "host file")
    show.add_argument("--seed", type=numbers.seed, default=0,
                      help="seed of a random placement (0)")
    show.add_argument("-o", "--output", type=writable_file, metavar="PICTURE",
                      help="draw the network to this .png, .svg or .pdf file")
    show.add_argument("--force", action="store_true", help="replace an existing output file")
    show.set_defaults(func=run_machine_show)




def _entry(name: str, width: int, *texts: str) -> list[str]:
    """``name`` and its texts, wrapped at 96 columns under a hanging indent."""
    out = []
    for i, text in enumerate(texts):
        head = f"  {name if i == 0 else '':<{width}} "
        out += textwrap.wrap(text, 96, initial_indent=head, break_on_hyphens=False,
                             subsequent_indent=" " * len(head))
    return out


def model_listing() -> str:
    """What ``pevpm predict --list-models`` prints: each communication model of a
    profile machine, and what the validation tables' ``amdahl`` column is instead.

    >>> print(model_listing().splitlines()[3])
      min2x1            the minimum time of the two-process ping-pong (no contention)
    """
    from pevpm.machine.profile_model import COMM_MODELS

    lines = [("Communication models of a profile (--machine PROFILE:model=NAME, e.g. "
              "default:model=mean2x1):")]
    for name, what in COMM_MODELS.items():
        lines += _entry(name, 17, what)
    lines += [""] + textwrap.wrap(
        "Not a machine: 'amdahl' in the validation tables is Amdahl's law with its serial "
        "fraction fitted to the measured speedups of the program itself, a whole-program "
        "baseline; compute it from measured times with 'pevpm analytic laws --fit "
        "TIMES.csv' (columns n,time; docs/analytic.md).", 96)
    return "\n".join(lines)


def machine_listing() -> str:
    """The text of ``pevpm machine list``: presets, built-in profiles (with their origin)
    and the models a profile offers.

    >>> text = machine_listing()
    >>> "perseus" in text and "default" in text and "latency-bandwidth" in text
    True
    """
    from pevpm.machine.presets import DESCRIPTIONS
    from pevpm.profile.builtin import builtin_names, profile_origin

    lines = ["Presets (--machine KIND[:key=value,...]; docs/predict.md lists the keys):"]
    for kind, (what, good_for) in DESCRIPTIONS.items():
        lines += _entry(kind, 9, what, f"good for: {good_for}")
    lines += ["", "Built-in profiles (--machine NAME[:model=...], pevpm profile show NAME):"]
    for name in builtin_names():
        origin = profile_origin(name)
        lines += _entry(name, 9, f"measured on {origin.summary()}",
                       *([f"good for: {origin.purpose}"] if origin.purpose else []))
    own = "Your own machine: mpiexec -n 2 pevpm bench --quick -o machine.db, then --machine it"
    lines += ["", own, "", model_listing()]
    return "\n".join(lines)


#: What ``machine show -o`` writes (recognised as pevpm's like any plot).
PICTURE = outputs.Purpose("picture", "-o", outputs.PLOT.recognises)


def run_machine_show(args) -> int:
    from pevpm.machine.presets import lay_out
    from pevpm.machine.topology import Topology
    from pevpm.machine.topology.summary import summary

    output = (outputs.check_output(args.output, PICTURE, force=args.force,
                                   inputs=outputs.input_paths(args.topology))
              if args.output else None)
    if output is not None and output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise PevpmError("the picture's name must end .png, .svg or .pdf", f"-o {args.output}")
    base = Topology(procs_per_node=args.ppn or (None if args.nodes else 1), nodes=args.nodes)
    topology = lay_out(base, args.topology, args.placement, args.seed, False)
    placed = topology.place(args.procs) if args.procs else None
    print("\n".join(summary(topology.network, placed)))
    if output is not None:
        from pevpm.report.topology_picture import draw_network

        with outputs.replacing(output) as temp:
            draw_network(topology.network, placed, temp)
        print(f"wrote {output}")
    return 0


def run_machine_list(args) -> int:
    print(machine_listing())
    return 0




#: Longest latency or overhead ``machine new`` takes (seconds): the squares of
#: longer times overflow the profile's statistics.
MAX_DURATION = 1e150


def _duration(text: str, option: str) -> float:
    """A duration option of ``machine new``: finite and at most :data:`MAX_DURATION`."""
    value = finite_result(parse_duration, option)(text)
    if value > MAX_DURATION:
        raise PevpmError(f"must be at most {MAX_DURATION:g} s, got {text}", option)
    return value


def _bandwidth(text: str, option: str) -> float:
    """A bandwidth option of ``machine new``: finite and at least
    ``MIN_BANDWIDTH`` B/s, as in ``--machine`` specs (slower links give times
    whose statistics overflow)."""
    from pevpm.machine.presets import MIN_BANDWIDTH

    value = finite_result(parse_bandwidth, option)(text)
    if value < MIN_BANDWIDTH:
        raise PevpmError(f"must be at least {MIN_BANDWIDTH:g} B/s, got {text}", option)
    return value


def run_machine_new(args) -> int:
    output = Path(args.output)
    if output.exists() and not args.force:
        raise ProfileError("already exists; pass --force to replace it", where=str(output))
    machine = HypotheticalMachine(
        latency=_duration(args.latency, "--latency"),
        bandwidth=_bandwidth(args.bandwidth, "--bandwidth"),
        shape=args.shape,
        spread=args.spread,
        contention_exponent=args.contention_exponent,
        shape_decay=args.shape_decay,
        intra_latency=(None if args.intra_latency is None
                       else _duration(args.intra_latency, "--intra-latency")),
        intra_bandwidth=(None if args.intra_bandwidth is None
                         else _bandwidth(args.intra_bandwidth, "--intra-bandwidth")),
        send_overhead=(None if args.send_overhead is None
                       else _duration(args.send_overhead, "--send-overhead")),
    )
    placements = [p.strip() for p in args.placements.split(",") if p.strip()]
    with replacing(output) as temp:
        temp.unlink()               # the profile writer creates its file
        count = write_profile(
            machine,
            temp,
            sizes=parse_sizes(args.sizes),
            placements=placements,
            samples=args.samples,
            name=args.name,
            random_state=args.seed,
            cores=args.cores,
            wait=args.wait,
        )
    print(f"wrote {count} blocks ({len(placements)} placements) to {output}")
    return 0
