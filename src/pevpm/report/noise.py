"""The report's "computation noise at scale" view: one model predicted under
each choice of computation noise, side by side.

The view is built from ``pevpm predict --json`` outputs of the same model on
the same machine with the same calibration file, one per
``--compute-noise`` choice (:func:`noise_view`), and drawn as a table and a
plot of the run time against the rank count (:func:`noise_section`).

>>> def run(noise, t):
...     return {"model": "heat.py", "machine": "cluster.db", "calibration": "heat.json",
...             "compute_noise": noise, "scaling": "weak", "runs": 5,
...             "predictions": [{"numprocs": 1, "mean": 0.18, "sd": 0.0},
...                             {"numprocs": 1024, "mean": t, "sd": 0.01}]}
>>> title, view = noise_view([run("none", 0.24), run("calibrated", 3.4), run("robust", 0.28)])
>>> title, list(view["curves"])
('heat.py on cluster.db', ['none', 'robust', 'calibrated'])
>>> print(noise_text(title, view))
heat.py on cluster.db, calibration heat.json: mean run time (s) by rank count
noise                 1       1024  efficiency at 1024  x none at 1024
none             0.1800     0.2400               0.750            1.00
robust           0.1800     0.2800               0.643            1.17
calibrated       0.1800      3.400               0.053           14.17
"""

from __future__ import annotations

import html
import os

from matplotlib.ticker import FuncFormatter

from pevpm.errors import PevpmError
from pevpm.report.pyplot import plt, save
from pevpm.report.results_schema import COUNT, NON_NEGATIVE

#: The choices in the order they are shown (others, such as per-parameter mixes, after).
NOISE_ORDER = ("none", "robust", "calibrated")
#: Where the docs explain the view.
DOCS = "docs/calibration.md, section 'Noise at scale'"
EXPLANATION = (
    "At every synchronisation (an MPI_Allreduce, a neighbour waiting for its own neighbours) "
    "the ranks go on together when the slowest arrives, so each iteration costs the largest "
    "of p draws of a region's time, not their mean: a per-call spread grows into a run time "
    "that rises with the rank count. 'none' leaves the spread out, 'robust' keeps the "
    "kernel's own (median and 1.4826 x MAD of the calls), 'calibrated' keeps the spread as "
    "measured, other jobs on the calibrating machine included. The range between them is the "
    "honest answer when the calibration was taken on a shared machine.")


def noise_view(outputs: list[dict], names: list[str] | None = None) -> tuple[str, dict]:
    """The view's title and entry (``results.json``'s ``noise`` values) from
    ``pevpm predict --json`` outputs; ``names`` say where each came from in
    errors.  They must predict one model on one machine from one calibration
    file, each under a different noise (at least two)."""
    names = names or [f"prediction {i + 1}" for i in range(len(outputs))]
    if len(outputs) < 2:
        raise PevpmError("give at least two predictions (pevpm predict --json under different "
                         "--compute-noise) to compare", "--noise")
    first = outputs[0]
    curves: dict[str, list[dict]] = {}
    for output, name in zip(outputs, names):
        if not isinstance(output, dict) or not isinstance(output.get("predictions"), list):
            raise PevpmError("not the output of pevpm predict --json", name)
        if not output.get("calibration") or not output.get("compute_noise"):
            raise PevpmError("predicted without --calibration: no computation noise to compare",
                             name)
        for key in ("model", "machine", "calibration"):
            if output.get(key) != first.get(key):
                raise PevpmError(f"{key} {output.get(key)!r}, not {first.get(key)!r} as in "
                                 f"{names[0]}: the view compares one model on one machine "
                                 "from one calibration", name)
        noise = str(output["compute_noise"])
        if noise in curves:
            raise PevpmError(f"a second prediction under noise '{noise}'", name)
        curves[noise] = [_point(p, name) for p in output["predictions"]
                         if not (isinstance(p, dict) and "error" in p)]
        if not curves[noise]:
            raise PevpmError("every rank count of this prediction failed", name)
    order = sorted(curves, key=lambda k: (NOISE_ORDER.index(k) if k in NOISE_ORDER
                                          else len(NOISE_ORDER), k))
    title = f"{first['model']} on {first['machine']}"
    return title, {"model": str(first["model"]), "machine": str(first["machine"]),
                   "calibration": str(first["calibration"]),
                   "scaling": str(first.get("scaling", "strong")),
                   "curves": {k: curves[k] for k in order}}


def _point(entry, where: str) -> dict:
    """A rank count's ``{"n", "mean", "sd"}`` from a ``pevpm predict --json`` entry."""
    if not (isinstance(entry, dict) and COUNT.accepts(entry.get("numprocs"))
            and all(NON_NEGATIVE.accepts(entry.get(key)) for key in ("mean", "sd"))):
        raise PevpmError("a prediction without a rank count, a mean and an sd: not the "
                         "output of pevpm predict --json", where)
    return {"n": entry["numprocs"], "mean": entry["mean"], "sd": entry["sd"]}


def _rows(view: dict) -> tuple[list[int], list[tuple[str, dict, float | None, float | None]]]:
    """The counts of every curve, and per noise: its means by count, its efficiency at
    the largest count over its smallest, and its time there over ``none``'s."""
    counts = sorted({p["n"] for curve in view["curves"].values() for p in curve}) or [1]
    top = counts[-1]
    plain = {p["n"]: p["mean"] for p in view["curves"].get("none", [])}
    rows = []
    for noise, curve in view["curves"].items():
        means = {p["n"]: p["mean"] for p in curve}
        base = min(means, default=top)
        efficiency = None
        if top in means and means[top] > 0:
            ratio = means[base] / means[top]
            efficiency = ratio if view["scaling"] == "weak" else ratio * base / top
        versus = means[top] / plain[top] if top in means and plain.get(top) else None
        rows.append((noise, means, efficiency, versus))
    return counts, rows


def _num(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def noise_text(title: str, view: dict) -> str:
    """The view as a text table (what ``pevpm report --noise`` prints)."""
    counts, rows = _rows(view)
    top = counts[-1]
    lines = [f"{title}, calibration {view['calibration']}: mean run time (s) by rank count",
             f"{'noise':<12}" + "".join(f" {n:>10}" for n in counts)
             + f" {'efficiency at ' + str(top):>19} {'x none at ' + str(top):>15}"]
    for noise, means, efficiency, versus in rows:
        lines.append(f"{noise:<12}"
                     + "".join(f" {_num(means.get(n), '#.4g'):>10}" for n in counts)
                     + f" {_num(efficiency, '.3f'):>19} {_num(versus, '.2f'):>15}")
    return "\n".join(lines)


def noise_figure(title: str, view: dict, path: str) -> None:
    """Mean run time (with one sd) against the rank count, one line per noise."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for noise, curve in view["curves"].items():
        ax.errorbar([p["n"] for p in curve], [p["mean"] for p in curve],
                    yerr=[p["sd"] for p in curve], marker="o", capsize=3, label=noise)
    counts = sorted({p["n"] for curve in view["curves"].values() for p in curve})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    low, high = ax.get_ylim()
    if high < 10 * low:                  # within a decade: the minor ticks are the scale
        ax.yaxis.set_minor_formatter(plain)
    ax.set_xticks(counts, [str(n) for n in counts])
    ax.set_xlabel("processes")
    ax.set_ylabel("predicted run time (s)")
    ax.set_title(f"{os.path.basename(view['model'])} on {view['machine']}: "
                 "computation noise", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(title="--compute-noise", fontsize=8)
    save(fig, path, dpi=100)


def noise_section(views: dict, outdir: str, image) -> str:
    """The HTML section of every view (title -> entry), its plots drawn into
    ``outdir``; ``image(file, title, caption)`` makes a figure's HTML."""
    e = html.escape
    out = [(f"<h2>Computation noise at scale</h2><p>{e(EXPLANATION)} (The docs: "
            f"<code>{e(DOCS)}</code>.)</p>")]
    for index, (title, view) in enumerate(views.items()):
        counts, rows = _rows(view)
        top = counts[-1]
        file = f"noise-{index}.png"
        noise_figure(title, view, os.path.join(outdir, file))
        out.append(f"<h3>{e(title)}</h3><p>Parameters from <code>{e(view['calibration'])}"
                   f"</code>; {e(view['scaling'])} scaling.</p><table><tr><th class='l'>"
                   "noise</th>" + "".join(f"<th>{n} ranks</th>" for n in counts)
                   + f"<th>efficiency at {top}</th><th>x none at {top}</th></tr>")
        for noise, means, efficiency, versus in rows:
            out.append(f"<tr><td class='l'><code>{e(noise)}</code></td>"
                       + "".join(f"<td>{_num(means.get(n), '#.4g')} s</td>"
                                 if n in means else "<td>-</td>" for n in counts)
                       + f"<td>{_num(efficiency, '.3f')}</td><td>{_num(versus, '.2f')}</td>"
                       "</tr>")
        out.append("</table>")
        out.append(image(file, f"{title}: run time under each computation noise",
                         "Mean predicted run time with one standard deviation; one line per "
                         "--compute-noise choice, the same model, machine and calibration."))
    return "".join(out)
