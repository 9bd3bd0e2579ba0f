"""``pevpm analytic laws|spmd|dpgraph``: analytic models from the command line.

Examples::

    pevpm analytic laws -f 0.95 -r 4 -n 4..256*2 --plot laws.png
    pevpm analytic laws --fit times.csv          # Amdahl fitted to measured times (n,time)
    pevpm analytic spmd --model bus-aio --preset qcrd -p 1..512*2 -d 1..64*2 --plot s.png
    pevpm analytic spmd --model bus-aio --preset qcrd --fit observed.csv --free w,sr_com
    pevpm analytic dpgraph graph.yaml
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pevpm.analytic import laws
from pevpm.analytic.config import load_mapping, parse_counts, read_speedups, read_times
from pevpm.analytic.dpgraph import LinearCost, Message, SendModeCost, TimingGraph, fit_send_mode
from pevpm.analytic.fitting import DEFAULT_FREE, fit_spmd
from pevpm.analytic.plots import SURFACE_KINDS, plot_speedup_curves, plot_speedup_surface
from pevpm.analytic.spmd import MODELS, QCRD_TABLE4, SYNC_COSTS, SpmdParameters, speedup_surface
from pevpm.cli import numbers, outputs
from pevpm.cli.paths import writable_file
from pevpm.errors import AnalyticError, PevpmError
from pevpm.values import checked_number, parse_number, shown

PRESETS = {"qcrd": QCRD_TABLE4}
KHANYILE_OPTIONS = ("t_seq", "messages", "message_bits", "bandwidth", "distance", "overhead",
                    "velocity_factor")


def _table(header: list[str], rows: list[list]) -> str:
    cells = [header] + [[v if isinstance(v, str) else f"{v:.6g}" for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells)


def _merge_config(args, path, allowed: set[str]) -> None:
    """Fill options the user left unset from a TOML/YAML file (command line wins)."""
    if not path:
        return
    data = load_mapping(path)
    unknown = set(data) - allowed
    if unknown:
        raise AnalyticError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(allowed))}")
    for key, value in data.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (int, float)):
                _checked(item, f"{path}: {key}")
        if getattr(args, key) is None:
            setattr(args, key, ",".join(map(str, value)) if isinstance(value, list) else value)


def _checked(value, where: str):
    """A number from a config or graph file by :mod:`pevpm.values`' rules."""
    try:
        return checked_number(value, where)
    except PevpmError as exc:
        raise AnalyticError(str(exc)) from None


def _floats(text, name: str) -> list[float]:
    try:
        return [float(parse_number(v, name)) for v in str(text).split(",")]
    except PevpmError:
        raise AnalyticError(f"{name}: expected a finite number or a comma list, got "
                            f"{shown(str(text))!r}") from None


def _counts(text, default: str, option: str) -> list[int]:
    """Counts from ``option`` (or ``default``), each at most ``numbers.MAX_PROCS``."""
    text = str(default if text is None else text)
    numbers.check_count_list(text, option)
    return parse_counts(text)


# ---------------------------------------------------------------- laws
def _amdahl_fit(path) -> int:
    """``laws --fit times.csv``: Amdahl's law fitted to measured run times (the
    ``amdahl`` baseline of ``pevpm validate``)."""
    counts, times = read_times(path)
    means = {n: float(np.mean([t for m, t in zip(counts, times) if m == n]))
             for n in sorted(set(counts))}
    n = np.array(list(means), dtype=float)
    measured = np.array(list(means.values()))
    serial = laws.fit_amdahl(n, measured[0] / measured)
    fitted = measured[0] / laws.amdahl_speedup(n, 1.0 - serial)
    print(f"Amdahl's law fitted to {len(times)} measured times: serial fraction "
          f"s = {serial:.4g}, parallel fraction f = {1 - serial:.4g}")
    print(_table(["n", "measured (s)", "amdahl (s)", "err %"],
                 [[int(k), m, f, f"{100 * (f - m) / m:+.1f}"]
                  for k, m, f in zip(n, measured, fitted)]))
    return 0


def _check_plot(args) -> None:
    """``--plot FILE`` checked against the command's input files (``--config``, ``--fit``)."""
    if args.plot:
        args.plot = outputs.check_output(args.plot, outputs.PLOT, force=args.force,
                                         inputs=outputs.input_paths(args.config, args.fit))


def run_analytic_laws(args) -> int:
    _check_plot(args)
    if args.fit:
        return _amdahl_fit(args.fit)
    _merge_config(args, args.config, {"processors", "parallel_fraction", "bce_per_core",
                                      *KHANYILE_OPTIONS})
    if args.parallel_fraction is None:
        raise AnalyticError("give the parallel fraction with -f/--parallel-fraction or --config")
    n = np.array(_counts(args.processors, "1..64*2", "-n"), dtype=float)
    f = float(args.parallel_fraction)
    r = 1.0 if args.bce_per_core is None else float(args.bce_per_core)
    big = n >= r
    curves = {
        "Amdahl": laws.amdahl_speedup(n, f),
        "Gustafson": laws.gustafson_speedup(n, f),
    }
    for label, law in (("Hill-Marty sym", laws.hill_marty_symmetric),
                       ("Hill-Marty asym", laws.hill_marty_asymmetric),
                       ("Hill-Marty dyn", laws.hill_marty_dynamic),
                       ("Sun-Chen", laws.sun_chen_fixed_time)):
        values = np.full(n.shape, np.nan)
        values[big] = law(n[big], f, r)
        curves[label] = values
    if args.t_seq is not None:
        messages = np.array(_floats(args.messages or 0, "--messages"))
        if messages.size == 1:
            messages = np.where(n > 1, messages[0], 0.0)
        elif messages.size != n.size:
            raise AnalyticError(f"--messages has {messages.size} values for {n.size} node counts")
        t_seq = float(args.t_seq)
        estimate = laws.khanyile_time(
            n, t_seq, f, messages, float(args.message_bits or 0), float(args.bandwidth or 1e9),
            float(args.distance or 0), float(args.overhead or 0),
            float(args.velocity_factor or 0.67))
        curves["Khanyile"] = t_seq / np.asarray(estimate)
    rows = [[f"{int(v)}"] + [("-" if np.isnan(c[i]) else float(c[i])) for c in curves.values()]
            for i, v in enumerate(n)]
    print(f"speedup, parallel fraction f = {f:g}, r = {r:g} BCEs per core "
          "(Hill-Marty and Sun-Chen use n = processors as chip BCEs)")
    print(_table(["n", *curves], rows))
    if args.plot:
        with outputs.replacing(args.plot) as temp:
            plot_speedup_curves(n, curves, temp, title=f"Scaling laws, f = {f:g}")
        print(f"wrote {args.plot}")
    return 0


# ---------------------------------------------------------------- spmd
PARAM_FIELDS = [f.name for f in dataclasses.fields(SpmdParameters)]
PARAM_HELP = {
    "s_par": "parallel CPU time of one CPU burst on one processor",
    "s_ser": "serial CPU time of one CPU burst",
    "s0_com": "communication start-up time per burst",
    "sr_com": "communication transfer time per burst when g(p) = 1",
    "s0_io": "serial part of the I/O burst",
    "sr_io": "parallel (striped) part of the I/O burst",
    "w": "contention level in [0, 1]: 0 fully connected, 1 shared bus",
    "n_io": "computation bursts per I/O burst (default 1)",
    "c": "synchronisation group size (default 1 = asynchronous)",
    "g_exponent": "a in g(p) = p^-a, (r-1)/r for r-dimensional data (default 1)",
    "sync_cost": f"h(c): {' or '.join(SYNC_COSTS)} (uniform: SIO only)",
}


def _spmd_parameters(args) -> SpmdParameters:
    values = dataclasses.asdict(PRESETS[args.preset]) if args.preset else {}
    for name in PARAM_FIELDS:
        given = getattr(args, name)
        if given is not None:
            values[name] = given
    if "s_par" not in values:
        raise AnalyticError("give --s-par (or --preset / --config): the parallel CPU time")
    try:
        typed = {k: (str(v) if k == "sync_cost" else float(v)) for k, v in values.items()}
    except (TypeError, ValueError) as exc:
        raise AnalyticError(f"bad SPMD parameter value: {exc}") from None
    return SpmdParameters(**typed)


def run_analytic_spmd(args) -> int:
    _check_plot(args)
    _merge_config(args, args.config, {"model", "preset", "p", "d", *PARAM_FIELDS})
    if args.model is None:
        raise AnalyticError(f"give --model ({', '.join(MODELS)})")
    if args.model not in MODELS:
        raise AnalyticError(f"unknown model {args.model!r}; choose one of {', '.join(MODELS)}")
    if args.preset is not None and args.preset not in PRESETS:
        raise AnalyticError(f"unknown preset {args.preset!r}; known: {', '.join(PRESETS)}")
    params = _spmd_parameters(args)
    p_values = _counts(args.p, "1..64*2", "-p")
    d_values = _counts(args.d, "1..8*2", "-d")
    if args.fit:
        return _spmd_fit(args, params)
    surface = speedup_surface(args.model, params, p_values, d_values)
    print(f"{args.model} speedup s(p, d); rows p, columns d; T1 = {params.reference_time:.6g}")
    print(_table(["p \\ d", *map(str, d_values)],
                 [[str(p), *map(float, surface[i])] for i, p in enumerate(p_values)]))
    if args.plot:
        with outputs.replacing(args.plot) as temp:
            plot_speedup_surface(p_values, d_values, surface, temp, kind=args.surface_kind,
                                 title=f"{args.model} speedup s(p, d)")
        print(f"wrote {args.plot}")
    return 0


def _spmd_fit(args, base: SpmdParameters) -> int:
    p, d, observed = read_speedups(args.fit)
    free = tuple(v.strip() for v in args.free.split(",")) if args.free else DEFAULT_FREE
    fit = fit_spmd(args.model, p, d, observed, base, free=free, starts=args.starts,
                   seed=args.seed)
    print(f"{args.model} fit to {len(observed)} observed speedups ({fit.starts} starts, "
          f"seed {args.seed}); fixed: " + ", ".join(
              f"{k}={getattr(base, k)}" for k in ("s_par", "n_io", "c", "g_exponent")
              if k not in fit.values))
    print(_table(["parameter", "value", "std error"],
                 [[k, v, fit.std[k]] for k, v in fit.values.items()]))
    print(f"average error (1/N) sqrt(sum ((s - s_obs)/s_obs)^2) = {100 * fit.average_error:.4f}%")
    rows = [[str(pi), str(di), so, so * (1 + r)]
            for pi, di, so, r in zip(p, d, observed, fit.residuals)]
    print(_table(["p", "d", "observed", "fitted"], rows))
    return 0


# ---------------------------------------------------------------- dpgraph
def _cost(spec, where: str) -> LinearCost:
    try:
        return LinearCost(checked_number(spec["per_element"], where, "per_element"),
                          checked_number(spec["latency"], where, "latency"))
    except (KeyError, TypeError):
        raise AnalyticError(f"{where}: need per_element and latency numbers") from None


def _send_modes(data: dict, path) -> dict[str, SendModeCost]:
    modes = {}
    for mode, spec in (data.get("send_modes") or {}).items():
        where = f"{path}: send_modes.{mode}"
        if not isinstance(spec, dict):
            raise AnalyticError(f"{where}: expected a table")
        if "measured" in spec:
            m = spec["measured"]
            try:
                lists = [[checked_number(v, f"{where}.measured", key) for v in m[key]]
                         for key in ("elements", "sender", "receiver")]
                modes[mode] = fit_send_mode(*lists)
            except (KeyError, TypeError):
                raise AnalyticError(f"{where}.measured: need elements, sender and receiver "
                                    "lists") from None
        else:
            modes[mode] = SendModeCost(_cost(spec.get("sender"), f"{where}.sender"),
                                       _cost(spec.get("receiver"), f"{where}.receiver"))
    return modes


def run_analytic_dpgraph(args) -> int:
    data = load_mapping(args.graph)
    nodes = data.get("nodes")
    if not isinstance(nodes, dict) or not nodes:
        raise AnalyticError(f"{args.graph}: need a 'nodes' table (node name -> segment times)")
    messages = []
    for i, m in enumerate(data.get("messages") or []):
        try:
            messages.append(Message(str(m["from"]), str(m["to"]),
                                    checked_number(m["elements"], f"{args.graph}: message {i}",
                                                   "elements"),
                                    str(m.get("mode", "standard"))))
        except (KeyError, TypeError, AttributeError):
            raise AnalyticError(f"{args.graph}: message {i} needs from, to and elements") from None
    try:
        graph = TimingGraph({str(k): list(v) for k, v in nodes.items()}, messages)
    except TypeError:
        raise AnalyticError(f"{args.graph}: each node needs a list of segment times") from None
    modes = _send_modes(data, args.graph)
    print("send-mode models t(n) = c n + k_l (seconds, n elements)")
    print(_table(["mode", "sender c", "sender k_l", "receiver c", "receiver k_l"],
                 [[m, s.sender.per_element, s.sender.latency, s.receiver.per_element,
                   s.receiver.latency] for m, s in modes.items()]))
    times = graph.node_times(modes)
    print(_table(["node", "time (s)"], [[node, t] for node, t in times.items()]))
    print(f"T_exec = {max(times.values()):.6g} s")
    return 0


def register(subparsers) -> None:
    """Add ``pevpm analytic ...`` to the top-level command line."""
    analytic = subparsers.add_parser(
        "analytic",
        description="Analytic performance models: scaling laws, Cremonesi-Gennaro SPMD "
                    "queueing networks solved by MVA, DP*Graph timing graphs.")
    sub = analytic.add_subparsers(dest="analytic_command", metavar="MODEL", required=True)

    p = sub.add_parser("laws", help="Amdahl, Gustafson, Hill-Marty, Sun-Chen, Khanyile")
    p.add_argument("-n", "--processors", help="counts, e.g. 1,2,4 or 1..64*2 (default)")
    p.add_argument("-f", "--parallel-fraction", type=numbers.finite,
                   help="parallel fraction f in [0, 1]")
    p.add_argument("-r", "--bce-per-core", type=numbers.finite,
                   help="Hill-Marty/Sun-Chen: BCEs per core (default 1)")
    p.add_argument("--t-seq", type=numbers.finite, help="Khanyile: sequential time, s (enables it)")
    p.add_argument("--messages", help="Khanyile: messages on the critical path, one number "
                   "for every n > 1 or a list, one per n")
    p.add_argument("--message-bits", type=numbers.finite, help="Khanyile: message size, bits")
    p.add_argument("--bandwidth", type=numbers.finite,
                   help="Khanyile: bandwidth bound, bits/s (1e9)")
    p.add_argument("--distance", type=numbers.finite, help="Khanyile: cable length, m (0)")
    p.add_argument("--overhead", type=numbers.finite, help="Khanyile: per-message overhead, s (0)")
    p.add_argument("--velocity-factor", type=numbers.finite, help="Khanyile: cable NVP (0.67)")
    p.add_argument("--config", help="TOML/YAML file with the same option names (a_b style)")
    p.add_argument("--plot", type=writable_file,
                   help="write the speedup curves to this image file")
    outputs.add_force(p)
    p.add_argument("--fit", metavar="CSV",
                   help="fit Amdahl's law to measured run times instead (columns n,time in "
                        "seconds, a row with n = 1 needed): the 'amdahl' baseline of "
                        "pevpm validate")
    p.set_defaults(func=run_analytic_laws)

    s = sub.add_parser("spmd", help="Cremonesi-Gennaro SIO / BUS-AIO / CLU-AIO speedups")
    s.add_argument("--model", help=f"one of {', '.join(MODELS)}")
    s.add_argument("--preset", help=f"start from published parameters: {', '.join(PRESETS)}")
    s.add_argument("--config", help="TOML/YAML file: model, preset, p, d and parameter names")
    s.add_argument("-p", help="processor counts (default 1..64*2)")
    s.add_argument("-d", help="disk counts (default 1..8*2)")
    for name in PARAM_FIELDS:
        kind = str if name == "sync_cost" else numbers.whole(1, numbers.MAX_PROCS) \
            if name == "c" else numbers.finite
        s.add_argument("--" + name.replace("_", "-"), dest=name, type=kind,
                       help=PARAM_HELP[name])
    s.add_argument("--plot", type=writable_file,
                   help="write the speedup surface to this image file")
    outputs.add_force(s)
    s.add_argument("--surface-kind", choices=SURFACE_KINDS, default="heatmap")
    s.add_argument("--fit", help="fit to the observed speedups in this CSV (columns p,d,speedup; "
                   "its p and d replace -p/-d)")
    s.add_argument("--free", help=f"parameters to fit (default {','.join(DEFAULT_FREE)})")
    s.add_argument("--starts", type=numbers.whole(1, 10_000), default=8,
                   help="fit start points (default 8)")
    s.add_argument("--seed", type=numbers.seed, default=0,
                   help="seed of the random starts (default 0)")
    s.set_defaults(func=run_analytic_spmd)

    g = sub.add_parser("dpgraph", help="DP*Graph timing graph: T_exec = max over nodes")
    g.add_argument("graph", help="TOML/YAML file with nodes, messages and send_modes")
    g.set_defaults(func=run_analytic_dpgraph)
