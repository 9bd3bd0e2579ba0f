"""The HTML report: one self-contained folder with ``index.html`` and its PNGs.

The report is built from ``results.json`` (what ``pevpm demo`` saves), so
``pevpm report`` can rebuild it without re-running anything.

Results layout (every key optional)::

    {"title": str, "machine": {key: value},
     "validation": {example: [{"n", "measured_mean", "measured_sd",
                               "predictions": {model: seconds}}]},
     "scaling": {example: [{"n", "mean", "sd"}]},
     "breakdowns": {example: {"numprocs": n, "ranks": [{"compute", "communication",
                                                        "waiting"}]}},
     "collectives": [{"title", "completions": [seconds]}],
     "explain": {title: [{"kind", "op", "exchange", "block", "sizes",
                          "contention", "messages"}]},   # pevpm predict --explain
     "links": {title: {"network": str, "rows": [{"link", "utilisation", "messages",
                                                 "bytes", "waited", "slowed"}],  # same
                       "placement": {"topology", "how", "node_of"}}},  # drawn
     "figures": [{"title", "file", "caption"}],     # PNGs already in the folder
     "trace": "trace.json", "notes": [str],
     "noise": {title: {"model", "machine", "calibration", "scaling",   # pevpm report --noise
                       "curves": {noise: [{"n", "mean", "sd"}]}}},
     "recorded": {"trace", "predicted_by", "machine", "perfetto", "numprocs",
                  "recorded_seconds", "predicted_seconds",       # pevpm report --recorded
                  "ranks": [{"rank", "recorded", "recorded_mpi", "recorded_compute",
                             "predicted", "predicted_mpi", "predicted_compute"}]}}

>>> import tempfile, os
>>> out = tempfile.mkdtemp()
>>> path = write_report({"title": "t", "machine": {"host": "x"}}, out)
>>> os.path.basename(path)
'index.html'
"""

from __future__ import annotations

import html
import json
import os

from pevpm.errors import PevpmError
from pevpm.files import read_json, write_text
from pevpm.host import BUSY_THRESHOLD, loads_differ
from pevpm.report import figures
from pevpm.report.noise import noise_section
from pevpm.report.results_schema import check_results

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f4f4f4} td.l,th.l{text-align:left}
.bad{color:#b00020;font-weight:600} figure{display:inline-block;margin:.5em}
figcaption{font-size:.85em;color:#555;max-width:640px} code{background:#f4f4f4;padding:0 .2em}
"""

# Marks the page with how many plots loaded, so a missing PNG is visible to a
# reader (and checkable by a headless browser).
PLOT_CHECK = """<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.querySelectorAll('img.plot'));
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-plots-loaded', ok + '/' + imgs.length);
  if (ok < imgs.length) {
    var p = document.createElement('p');
    p.className = 'bad';
    p.textContent = (imgs.length - ok) + ' plot(s) failed to load.';
    document.body.insertBefore(p, document.body.firstChild);
  }
});
</script>"""


def _e(value) -> str:
    return html.escape(str(value))


def _scaling_table(example: str, points: list[dict]) -> str:
    """A curve's predictions beyond the measured counts, with the speedup and parallel
    efficiency over its first point, and how each point was obtained (problem size,
    iterations simulated and scaled, calibration) when the results say so."""
    from pevpm.analytic.scaling import scaling_views

    views = scaling_views([p["n"] for p in points], [p["mean"] for p in points])
    rows = [(f"<h3>{_e(example)}: predicted beyond what this machine runs</h3>"
            "<table><tr><th>n</th><th>mean</th><th>sd</th><th>speedup</th>"
            "<th>efficiency</th><th>grid</th><th>iterations simulated</th><th>runs</th>"
            "<th class='l'>serial times</th></tr>")]
    for p, view in zip(points, views):
        simulated = (f"{p['simulated_iterations']} of {p['iterations']} (time x "
                     f"{p['scaled_by']:.4g})" if "simulated_iterations" in p else "?")
        rows.append(f"<tr><td>{p['n']}</td><td>{_fmt_seconds(p['mean'])}</td>"
                    f"<td>{_fmt_seconds(p['sd'])}</td><td>{_ratio(view['speedup'])}</td>"
                    f"<td>{_ratio(view['efficiency'])}</td><td>{_e(p.get('grid', '?'))}</td>"
                    f"<td>{_e(simulated)}</td><td>{_e(p.get('runs', '?'))}</td>"
                    f"<td class='l'>{_e(p.get('calibration', ''))}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _fmt_seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.3f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3f} ms"
    return f"{value * 1e6:.1f} µs"


def error_percent(predicted: float, measured: float) -> float:
    """Signed prediction error in percent of the measured value."""
    return (predicted - measured) / measured * 100.0


def _img(file: str, title: str, caption: str = "") -> str:
    cap = f"<figcaption>{_e(caption)}</figcaption>" if caption else ""
    return (f'<figure><img src="{_e(file)}" alt="{_e(title)}" class="plot">'
            f"<figcaption><b>{_e(title)}</b></figcaption>{cap}</figure>")


def _validation_table(example: str, rows: list[dict], tolerance: float) -> str:
    models = sorted({m for r in rows for m in r["predictions"]})
    head = "".join(f"<th>{_e(m)}</th><th>err %</th>" for m in models)
    out = [f"<h3>{_e(example)}</h3><table><tr><th>n</th><th>measured mean ± sd</th>{head}</tr>"]
    for r in rows:
        cells = []
        for m in models:
            if m not in r["predictions"]:
                cells.append("<td>–</td><td>–</td>")
                continue
            p = r["predictions"][m]
            err = error_percent(p, r["measured_mean"])
            cls = ' class="bad"' if abs(err) > tolerance else ""
            cells.append(f"<td>{_fmt_seconds(p)}</td><td{cls}>{err:+.1f}</td>")
        busy = r.get("measured_others", 0.0) > BUSY_THRESHOLD
        flag = (f' class="bad" title="other processes used up to {r["measured_others"]:.2f} '
                f'cores during these runs"' if busy else "")
        out.append(f"<tr><td>{r['n']}</td><td{flag}>{_fmt_seconds(r['measured_mean'])} ± "
                   f"{_fmt_seconds(r['measured_sd'])}{' (busy)' if busy else ''}</td>"
                   f"{''.join(cells)}</tr>")
    out.append("</table>")
    busy = [r for r in rows if r.get("measured_others", 0.0) > BUSY_THRESHOLD]
    if busy:
        worst = max(r["measured_others"] for r in busy)
        counts = ", ".join(str(r["n"]) for r in busy)
        out.append(f"<p class=\"note\">The real runs at n = {counts} shared the machine with "
                   f"other busy processes (up to {worst:.2f} cores' worth of CPU): their "
                   "measured times, and the errors against them, may be too large.</p>")
    for r in rows:
        if loads_differ(r.get("measured_others", 0.0), r.get("calibration_others")):
            out.append(f"<p class=\"note\">At n = {r['n']} the calibration and the real runs "
                       f"saw different loads: other processes used "
                       f"{r['calibration_others']:.2f} cores during the calibration, up to "
                       f"{r['measured_others']:.2f} during the runs.</p>")
    return "".join(out)


#: Columns of the explain table: (heading, key of a ``BlockUse.to_dict`` row).
EXPLAIN_COLUMNS = (("kind", "kind"), ("operation", "op"), ("exchange", "exchange"),
                   ("profile block", "block"), ("sizes (B)", "sizes"),
                   ("contention", "contention"), ("messages", "messages"))


def _explain_section(explain: dict) -> str:
    """Which profile block served which messages (``pevpm predict --explain``
    rows, one table per prediction)."""
    head = "".join(f"<th class='l'>{_e(title)}</th>" for title, _ in EXPLAIN_COLUMNS)
    out = [("<h2>Profile blocks behind the predictions</h2><p>For one simulated run: which "
           "measured block gave each kind of message its time, for how many messages, at "
           "which sizes and contention.</p>")]
    for title, rows in explain.items():
        out.append(f"<h3>{_e(title)}</h3><table><tr>{head}</tr>")
        out.extend("<tr>" + "".join(f"<td class='l'>{_e(row[key])}</td>"
                                    for _, key in EXPLAIN_COLUMNS) + "</tr>" for row in rows)
        out.append("</table>")
    return "".join(out)


def _links_section(links: dict, outdir: str) -> str:
    """The busiest network links of one run per prediction (``pevpm predict
    --explain --json``'s ``links`` and ``network``), under the picture of the
    network with the ranks placed on it where the prediction gave its
    ``placement`` (what ``pevpm machine show -o`` draws)."""
    head = "".join(f"<th class='l'>{h}</th>" for h in (
        "link", "use", "messages", "bytes", "waited", "slowed most"))
    out = ["<h2>Busiest network links</h2><p>For one simulated run: what each link "
           "carried, its use, how long messages waited on it and the place in the model "
           "whose messages waited most.</p>"]
    for i, (title, table) in enumerate(links.items()):
        out.append(f"<h3>{_e(title)}</h3><p>{_e(table['network'])}</p>")
        if table.get("placement"):
            from pevpm.report.topology_picture import placement_picture

            placed = table["placement"]
            file = f"network-{i}.png"
            _, text = placement_picture(placed["topology"], placed["how"], placed["node_of"],
                                        os.path.join(outdir, file))
            out.append(_img(file, f"{title}: the network", f"{text}. Dots: nodes, shaded by "
                            "how many ranks run on them; squares: switches or routers."))
        out.append(f"<table><tr>{head}</tr>")
        for row in table["rows"]:
            cells = (row["link"], f"{row['utilisation']:.0%}", row["messages"], row["bytes"],
                     _fmt_seconds(row["waited"]), row["slowed"] or "-")
            out.append("<tr>" + "".join(f"<td class='l'>{_e(c)}</td>" for c in cells)
                       + "</tr>")
        out.append("</table>")
    return "".join(out)


#: Columns of the recorded-vs-predicted table: (heading, key of a rank's row).
RECORDED_COLUMNS = (("recorded end", "recorded"), ("predicted end", "predicted"),
                    ("recorded MPI", "recorded_mpi"), ("predicted MPI", "predicted_mpi"),
                    ("recorded compute", "recorded_compute"),
                    ("predicted compute", "predicted_compute"))


def _recorded_section(recorded: dict) -> str:
    """A recorded trace against its prediction: the side-by-side Perfetto file, what
    predicted it, and one row per rank (``pevpm report --recorded``)."""
    total = recorded["recorded_seconds"]
    error = (f" ({error_percent(recorded['predicted_seconds'], total):+.1f}%)"
             if total > 0 else "")
    out = [("<h2>Recorded vs predicted</h2><p>The run recorded in "
            f"<code>{_e(recorded['trace'])}</code> on {recorded['numprocs']} ranks against "
            f"{_e(recorded['predicted_by'])} on <code>{_e(recorded['machine'])}</code>: "
            f"recorded {_fmt_seconds(total)}, predicted "
            f"{_fmt_seconds(recorded['predicted_seconds'])}{error}.</p>"
            f"<p><a href='{_e(recorded['perfetto'])}'>{_e(recorded['perfetto'])}</a>: both "
            "runs side by side, one process group each, one track per rank; open it in "
            "<code>ui.perfetto.dev</code>.</p><p>End: when the rank's program ended, from the "
            "first rank's program start (the end of its MPI_Init); MPI: its time inside MPI "
            "calls (predicted: communicating and waiting); compute: the rest.</p><table><tr><th>rank</th>"),
           "".join(f"<th>{_e(title)}</th>" for title, _ in RECORDED_COLUMNS), "</tr>"]
    out.extend(f"<tr><td>{row['rank']}</td>"
               + "".join(f"<td>{_fmt_seconds(row[key])}</td>" for _, key in RECORDED_COLUMNS)
               + "</tr>" for row in recorded["ranks"])
    out.append("</table>")
    return "".join(out)


def write_report(results: dict, outdir: str, tolerance: float = 10.0) -> str:
    """Draw the plots and write ``outdir/index.html``; returns its path."""
    os.makedirs(outdir, exist_ok=True)
    parts = [(f"<!doctype html><html><head><meta charset='utf-8'><title>"
             f"{_e(results.get('title', 'pevpm report'))}</title><style>{STYLE}</style>"
             f"</head><body><h1>{_e(results.get('title', 'pevpm report'))}</h1>")]
    for note in results.get("notes", []):
        parts.append(f"<p>{_e(note)}</p>")
    if results.get("machine"):
        parts.append("<h2>Machine</h2><table>")
        parts.extend(f"<tr><th class='l'>{_e(k)}</th><td class='l'>{_e(v)}</td></tr>"
                     for k, v in results["machine"].items())
        parts.append("</table>")

    validation = results.get("validation", {})
    scaling = results.get("scaling", {})
    if validation or scaling:
        parts.append("<h2>Measured vs predicted</h2>")
        for example in sorted(set(validation) | set(scaling)):
            file = f"speedup-{example}.png"
            figures.speedup_figure(example, validation.get(example, []),
                                   scaling.get(example, []), os.path.join(outdir, file))
            parts.append(_img(file, f"{example}: speedup",
                              "Points: measured mean with one standard deviation; lines: "
                              "predictions of each model."))
        parts.append("<h2>Every prediction error</h2>"
                     f"<p>Errors beyond ±{tolerance:g}% are marked.</p>")
        for example, rows in sorted(validation.items()):
            parts.append(_validation_table(example, rows, tolerance))
        for example, points in sorted(scaling.items()):
            parts.append(_scaling_table(example, points))
    if results.get("noise"):
        parts.append(noise_section(results["noise"], outdir, _img))

    if results.get("breakdowns"):
        parts.append("<h2>Per-rank breakdown</h2>")
        for example, b in sorted(results["breakdowns"].items()):
            file = f"breakdown-{example}.png"
            figures.breakdown_figure(example, b["numprocs"], b["ranks"],
                                     os.path.join(outdir, file))
            parts.append(_img(file, f"{example}: computation, communication, waiting"))

    if results.get("collectives"):
        parts.append("<h2>Collectives per process</h2>")
        for i, c in enumerate(results["collectives"]):
            file = f"collective-{i}.png"
            figures.completion_histogram(c["title"], c["completions"], os.path.join(outdir, file))
            parts.append(_img(file, c["title"], c.get("caption", "")))

    if results.get("explain"):
        parts.append(_explain_section(results["explain"]))
    if results.get("links"):
        parts.append(_links_section(results["links"], outdir))

    if results.get("figures"):
        parts.append("<h2>Machine profile and fitted distributions</h2>")
        for f in results["figures"]:
            if not os.path.exists(os.path.join(outdir, f["file"])):
                raise PevpmError(f"report figure {f['file']!r} is missing", where=outdir)
            parts.append(_img(f["file"], f["title"], f.get("caption", "")))

    if results.get("trace"):
        parts.append("<h2>Trace of one simulated run</h2><p>"
                     f"<a href='{_e(results['trace'])}'>{_e(results['trace'])}</a>: open it in "
                     "<code>ui.perfetto.dev</code> or <code>chrome://tracing</code> (one track "
                     "per rank; computation, communication and waiting as slices; messages as "
                     "arrows).</p>")
    if results.get("recorded"):
        parts.append(_recorded_section(results["recorded"]))
    parts.append(PLOT_CHECK + "</body></html>")
    path = os.path.join(outdir, "index.html")
    saved = json.dumps(results, indent=1)
    write_text(path, "\n".join(parts))
    write_text(os.path.join(outdir, "results.json"), saved)
    return path


def rebuild_report(outdir: str) -> str:
    """Re-draw ``outdir/index.html`` from the ``results.json`` saved beside it."""
    return write_report(read_results(outdir), outdir)


def read_results(outdir: str) -> dict:
    """The ``results.json`` saved in report folder ``outdir``."""
    path = os.path.join(outdir, "results.json")
    if not os.path.lexists(path):
        raise PevpmError("no results.json here: run 'pevpm demo' first", where=outdir)
    try:
        results = read_json(path, "results.json")
    except PevpmError as exc:
        if exc.message.startswith("not a JSON file"):
            raise PevpmError(f"results.json is not valid JSON{exc.message[15:]}",
                             where=path) from None
        raise
    if not isinstance(results, dict):
        raise PevpmError("results.json does not hold an object of results", where=path)
    check_results(results, path)
    return results


def figure_files(results: dict) -> tuple[str, ...]:
    """The figures of ``results`` the report shows but does not draw (the fits
    ``pevpm demo`` plotted), by their names in the report folder.

    >>> figure_files({"figures": [{"file": "isend.fits.png"}, {"file": "../x.png"}]})
    ('isend.fits.png',)
    """
    names = (figure.get("file") for figure in results.get("figures", []))
    return tuple(name for name in names if isinstance(name, str) and name
                 and os.path.basename(name) == name and name not in (".", ".."))
