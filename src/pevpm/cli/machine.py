"""``pevpm fit`` (fit distributions to a profile), ``pevpm machine list`` and ``new``.

pevpm fit machine.db                      # table, fits stored, plots in machine-fits/
pevpm fit machine.db --tests isend --nxp 2x4 --no-plots
pevpm fit default --no-plots              # a built-in profile: fits shown, not stored
pevpm machine list                        # presets and built-in profiles, with their origin
pevpm machine new --latency 2us --bandwidth 10GB/s --shape 4 -o hyp.db
"""

from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path

from pevpm.bench.options import parse_duration, parse_sizes
from pevpm.cli import numbers
from pevpm.cli.numbers import finite_result
from pevpm.cli.outputs import replacing
from pevpm.cli.paths import writable_file, writable_folder
from pevpm.errors import ModelError, PevpmError, ProfileError
from pevpm.host import WAIT_STYLES
from pevpm.profile.fits import BlockFit, TrendGroup, fit_profile, pearson_trends
from pevpm.profile.synthetic import (
    DEFAULT_PLACEMENTS,
    DEFAULT_SIZES,
    HypotheticalMachine,
    parse_bandwidth,
    write_profile,
)
from pevpm.stats.fitting import DEFAULT_FAMILIES

TIME_PARAMETERS = ("scale", "loc")


def register(subparsers) -> None:
    fit = subparsers.add_parser(
        "fit",
        help="fit distributions (Pearson V, Weibull, ...) to every block of a profile",
        description="Fit each block's times by maximum likelihood, pick the best family by AIC, "
        "test goodness (KS, Anderson-Darling on 500 points) and independence, store the fits "
        "in the profile and plot them.",
    )
    fit.add_argument("profile", help="machine profile (SQLite) written by pevpm bench, or a "
                     "built-in profile's name (its fits are shown, not stored)")
    fit.add_argument("--tests", help="comma-separated tests to fit (default: all)")
    fit.add_argument("--nxp", help="only this placement, e.g. 2x4")
    fit.add_argument(
        "--families",
        default=",".join(DEFAULT_FAMILIES),
        help="candidate families (default %(default)s; also: gengamma)",
    )
    fit.add_argument("--seed", type=numbers.seed, default=0, help="seed of the subsamples (0)")
    fit.add_argument("--plots", type=writable_folder,
                     help="directory for plots (default: <profile>-fits next to it)")
    fit.add_argument("--no-plots", dest="plot", action="store_false", help="do not plot")
    fit.add_argument(
        "--no-store", dest="store", action="store_false", help="do not write fits back"
    )
    fit.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    fit.set_defaults(func=run_fit)

    machine = subparsers.add_parser("machine", help="list the built-in machines; write "
                                    "hypothetical ones")
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


def format_time(seconds: float) -> str:
    """Seconds in the unit that reads best.

    >>> format_time(2.5e-6), format_time(0.0123), format_time(0.0)
    ('2.50us', '12.30ms', '0.00us')
    """
    magnitude = abs(seconds)
    for unit, factor in (("s", 1.0), ("ms", 1e-3)):
        if magnitude >= factor:
            return f"{seconds / factor:.2f}{unit}"
    return f"{seconds * 1e6:.2f}us"


def format_params(family: str, params: dict[str, float]) -> str:
    """``shape=1.49 scale=53.75us loc=2.41us`` (times for scale and location).

    >>> format_params("pearson5", {"shape": 1.5, "scale": 5e-5, "loc": 2e-6})
    'shape=1.5 scale=50.00us loc=2.00us'
    """
    parts = []
    for name, value in params.items():
        is_time = name in TIME_PARAMETERS and not (family == "lognormal" and name != "loc")
        parts.append(f"{name}={format_time(value) if is_time else f'{value:.3g}'}")
    return " ".join(parts)


def fit_table(blocks: list[BlockFit]) -> str:
    """The table printed by ``pevpm fit``."""
    header = f"{'test':<12} {'size':>7} {'nxp':<5} {'best':<11} {'parameters':<44} {'KS p':>7} {'AD p':>7} indep"
    lines = [header, "-" * len(header)]
    for block in blocks:
        best, key = block.best, block.key
        independent = (
            "-"
            if block.independence is None
            else ("yes" if block.independence.independent else "no")
        )
        lines.append(
            f"{key.test + key.variant:<12} {key.size:>7} {key.nxp:<5} {best.family:<11} "
            f"{format_params(best.family, best.params):<44} {best.ks_pvalue:>7.3f} "
            f"{best.ad_pvalue:>7.3f} {independent}"
        )
    return "\n".join(lines)


def trend_lines(groups: list[TrendGroup]) -> list[str]:
    """One line per trend: ``isend intra-node: location = 2.41us + size / 1.20 GB/s, ...``."""
    lines = []
    for group in groups:
        trend = group.trend
        a0, a_c, a_s = trend.shape_coefficients
        if math.isinf(trend.bandwidth):  # location does not grow with size
            location, size_term = format_time(trend.latency), ""
        else:
            location = f"{format_time(trend.latency)} + size / {trend.bandwidth / 1e9:.3g} GB/s"
            size_term = f" * (1+size/{trend.half_length:.3g})^{a_s:+.3f}"
        lines.append(
            f"{group.label}: location = {location}; shape = {math.exp(a0):.3g} * c^{a_c:+.3f}"
            f"{size_term} (sizes {trend.size_range[0]}..{trend.size_range[1]} B, "
            f"contention {trend.contention_range[0]}..{trend.contention_range[1]})"
        )
    return lines


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


def run_machine_list(args) -> int:
    print(machine_listing())
    return 0


def run_fit(args) -> int:
    from pevpm.profile.builtin import is_builtin, resolve_profile
    from pevpm.report.fit_plots import plot_block_fits, plot_trends

    if is_builtin(args.profile):
        if args.store:
            print(f"pevpm fit: note: '{args.profile}' is a built-in profile; its fits are "
                  "shown, not stored", file=sys.stderr)
        args.store = False
        args.plots = args.plots or f"{args.profile}-fits"
    profile = resolve_profile(args.profile)
    tests = [t.strip() for t in args.tests.split(",") if t.strip()] if args.tests else None
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    result = fit_profile(
        profile,
        tests=tests,
        nxp=args.nxp,
        families=families,
        seed=args.seed,
        store=args.store,
        progress=args.progress,
    )
    blocks = result.blocks
    for label, reason in result.skipped.items():
        print(f"skipped {label}: {reason}")
    if not blocks:
        raise ModelError(f"no block of {args.profile} could be fitted")
    print(fit_table(blocks))
    groups = pearson_trends(blocks)
    for line in trend_lines(groups):
        print(line)
    if args.store:
        print(f"stored {sum(len(b.selection.fits) for b in blocks)} fits in {args.profile}")
    if args.plot:
        directory = (
            Path(args.plots)
            if args.plots
            else profile.with_name(profile.stem + "-fits")
        )
        written = plot_block_fits(blocks, directory) + plot_trends(groups, directory)
        print(f"wrote {len(written)} plots to {directory}")
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
