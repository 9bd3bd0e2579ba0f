"""``pevpm fit``: fit distributions to every block of a profile.

pevpm fit machine.db                      # table, fits stored, plots in machine-fits/
pevpm fit machine.db --tests isend --nxp 2x4 --no-plots
pevpm fit default --no-plots              # a built-in profile: fits shown, not stored
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

from pevpm.cli import numbers, outputs
from pevpm.cli.paths import writable_folder
from pevpm.errors import ModelError
from pevpm.stats.family_names import DEFAULT_FAMILIES

if TYPE_CHECKING:  # the fits load scipy: imported when the command runs
    from pevpm.profile.fits import BlockFit, TrendGroup

TIME_PARAMETERS = ("scale", "loc")


def register(subparsers) -> None:
    fit = subparsers.add_parser(
        "fit",
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
    outputs.add_force(fit)
    fit.set_defaults(func=run_fit)


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


def run_fit(args) -> int:
    from pevpm.profile.builtin import is_builtin, resolve_profile
    from pevpm.profile.fits import fit_profile, pearson_trends
    from pevpm.report.fit_plots import plot_block_fits, plot_trends

    if is_builtin(args.profile):
        if args.store:
            print(f"pevpm fit: note: '{args.profile}' is a built-in profile; its fits are "
                  "shown, not stored", file=sys.stderr)
        args.store = False
        args.plots = args.plots or f"{args.profile}-fits"
    profile = resolve_profile(args.profile)
    plots = outputs.check_folder(args.plots or str(profile.with_name(profile.stem + "-fits")),
                                 outputs.FIT_PLOTS, inputs=[profile],
                                 force=args.force) if args.plot else None
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
    if plots is not None:
        with outputs.replacing_folder(plots, outputs.FIT_PLOTS.what) as stage:
            written = plot_block_fits(blocks, stage) + plot_trends(groups, stage)
        print(f"wrote {len(written)} plots to {plots}")
    return 0
