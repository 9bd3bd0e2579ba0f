"""Hypothesis strategies for the classes of hostile input issue 30 found
beyond what :mod:`fuzz_strategies` makes: an input used as an output (a file,
or a folder that holds, lies in or links to an input),
type-confused ``results.json``, very long number literals, deep nesting and
long call chains, byte-order marks and bytes that are not UTF-8, special
files (FIFOs, devices, folders) where files belong, hostile SQLite schemas
(views, triggers, indexes in place of tables) and early Ctrl-C.

Each ``*_case`` draws ``case(tmp, profile) -> list of argv`` as in
:mod:`fuzz_strategies`; the campaign runs them with
:func:`fuzz_harness.run_checked`, which also fails a command that changed
any file it did not own as an output.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import sqlite3
from pathlib import Path

from fuzz_strategies import PREDICT
from hypothesis import strategies as st
from trace_archives import ping_records, write_archive

SERIAL = "// PEVPM Serial time = 1e-6\n"
LOOP = "// PEVPM Loop iterations = 2\n// PEVPM {\n" + SERIAL + "// PEVPM }\n"
MODEL_FILE = ("from pevpm.model.builder import ModelBuilder\n\n\ndef model():\n"
              "    b = ModelBuilder()\n    b.serial(VALUE)\n    return b\n")
PREDICT_2 = ["-n", "2", *PREDICT]


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


# ---------------------------------------------------------------- an input as the output

@st.composite
def output_onto_input_case(draw):
    """A writing command whose output is one of its inputs, a link to one, a path
    inside its trace archive, a file pevpm did not write, a FIFO or a new file."""
    command = draw(st.sampled_from(["trace", "export", "extract", "perfetto", "recorded",
                                    "machine", "plot"]))
    target = draw(st.sampled_from(["input", "hardlink", "symlink", "inside", "foreign",
                                   "fifo", "new", "profile"]))
    force = draw(st.booleans())

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        model = _write(tmp / "m.c", LOOP)
        own_profile = tmp / "machine.db"
        shutil.copyfile(profile, own_profile)
        archive = tmp / "run"
        anchor = write_archive(archive, ping_records())
        config = _write(tmp / "laws.toml", "parallel_fraction = 0.9\n")
        main_input = {"trace": model, "export": own_profile, "extract": anchor,
                      "perfetto": anchor, "recorded": model, "machine": own_profile,
                      "plot": config}[command]
        out = {"input": main_input, "profile": own_profile, "inside": archive / "x.json",
               "foreign": _write(tmp / "notes.json", '{"mine": true}\n'),
               "new": tmp / "new.out"}.get(target)
        if target in ("hardlink", "symlink"):
            out = tmp / f"link{main_input.suffix}"
            (os.link if target == "hardlink" else os.symlink)(main_input, out)
        elif target == "fifo":
            out = tmp / "out.fifo"
            os.mkfifo(out)
        argv = {
            "trace": ["predict", str(model), *PREDICT_2, "--machine", str(own_profile),
                      "--trace", str(out)],
            "export": ["profile", "export-csv", str(own_profile), "-o", str(out)],
            "extract": ["extract", str(archive), "-o", str(out)],
            "perfetto": ["replay", str(anchor), "--machine", "constant:latency=1us",
                         "--perfetto", str(out)],
            "recorded": ["predict", str(model), "--recorded", str(archive), *PREDICT[:-4],
                         "--trace", str(out)],
            "machine": ["machine", "new", "-o", str(out), "--latency", "5us", "--bandwidth",
                        "1GB/s", "--sizes", "0,1024", "--placements", "1x2", "--samples",
                        "20"],
            "plot": ["analytic", "laws", "--config", str(config), "-n", "1,2,4", "--plot",
                     str(out)],
        }[command]
        return [argv + (["--force"] if force else [])]
    return case


# ---------------------------------------------------------------- an input's folder as the output

FOLDER_COMMANDS = ("demo", "report", "recorded", "trace", "fit", "plot")


@st.composite
def output_folder_case(draw):
    """A command that writes a folder (``demo -o``, ``report DIR``, ``report --recorded``,
    ``trace -o``, ``fit --plots``, ``profile plot -o``) given a folder that holds one of
    its inputs, lies inside one, links to one, holds the user's own files, is a report
    or plots pevpm wrote, is new, or is a file or FIFO; with or without ``--force``,
    and now and then interrupted (Ctrl-C) part-way."""
    command = draw(st.sampled_from(FOLDER_COMMANDS))
    target = draw(st.sampled_from(["holds-input", "inside-input", "symlink", "foreign",
                                   "report", "plots", "new", "empty", "file", "fifo"]))
    force = draw(st.booleans())
    interrupt = draw(st.sampled_from([None] * 6 + [0.4, 1.0, 2.0]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        inputs = tmp / "inputs"
        own_profile = inputs / "machine.db"
        _write(own_profile, Path(profile).read_bytes())
        model = _write(inputs / "m.py", MODEL_FILE.replace("VALUE", "1e-6"))
        archive = inputs / "run"
        write_archive(archive, ping_records())
        report = tmp / "report"
        _write(report / "results.json", json.dumps(RESULTS))
        _write(report / "index.html", "<!doctype html><html>old report</html>")
        _write(report / ".pevpm-folder", "report folder\n")
        plots = tmp / "plots"
        _write(plots / "old.png", b"\x89PNG old plot")
        _write(plots / ".pevpm-folder", "plot folder\n")
        foreign = tmp / "mine"
        _write(foreign / "notes.txt", "my notes\n")
        _write(foreign / "results.json", "my own results\n")
        out = {"holds-input": inputs, "inside-input": archive / "out", "foreign": foreign,
               "report": report, "plots": plots, "new": tmp / "new", "empty": tmp / "empty",
               "file": _write(tmp / "a-file", "mine\n")}.get(target)
        if target == "empty":
            out.mkdir()
        elif target == "symlink":
            out = tmp / "link"
            os.symlink(inputs, out)
        elif target == "fifo":
            out = tmp / "out.fifo"
            os.mkfifo(out)
        argv = {
            "demo": ["demo", "-o", str(out), "--quick", "--profile", str(own_profile)],
            "report": ["report", str(out)],
            "recorded": ["report", str(out), "--recorded", str(archive), "--model", str(model),
                         "--machine", str(own_profile)],
            "trace": ["trace", "-o", str(out), "--", "true", str(model)],
            "fit": ["fit", str(own_profile), "--no-store", "--no-progress", "--tests",
                    "isend", "--plots", str(out)],
            "plot": ["profile", "plot", str(own_profile), "--test", "isend", "-o", str(out)],
        }[command] + (["--force"] if force else [])
        if command == "trace" and force:        # the launch command comes last
            argv = [*argv[:3], "--force", *argv[3:-1]]
        if command == "demo" and target not in ("holds-input", "symlink"):
            argv[argv.index("--profile") + 1] = "/no/such/profile.db"   # never runs mpiexec
        return [[f"@interrupt={interrupt}", *argv] if interrupt else argv]
    return case


# ---------------------------------------------------------------- type-confused results.json

RESULTS = {
    "title": "demo", "notes": ["a note"], "machine": {"hosts": "node0"},
    "validation": {"jacobi": [{"n": 1, "measured_mean": 2.0, "measured_sd": 0.05,
                               "predictions": {"full": 2.02}},
                              {"n": 2, "measured_mean": 1.0, "measured_sd": 0.04,
                               "predictions": {"full": 1.2}}]},
    "scaling": {"jacobi": [{"n": 4, "mean": 0.6, "sd": 0.01}]},
    "breakdowns": {"jacobi": {"numprocs": 2, "ranks": [
        {"compute": 0.8, "communication": 0.1, "waiting": 0.1},
        {"compute": 0.7, "communication": 0.1, "waiting": 0.2}]}},
    "collectives": [{"title": "bcast", "completions": [1e-6, 2e-6, 3e-6]}],
    "explain": {"jacobi 2": [{"kind": "p2p", "op": "MPI_Send", "exchange": "one-way",
                              "block": "send 1x2", "sizes": "8", "contention": "1",
                              "messages": 4}]},
    "trace": "trace.json",
}
CONFUSED = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.just(10 ** 400),
                     st.sampled_from(["NaN", "Infinity", "-Infinity"]).map(float),
                     st.text(max_size=5), st.just([]), st.just({}), st.just([[[[1]]]]),
                     st.just({"n": "x"}))


def _paths(value) -> list[tuple]:
    """Every path to a value inside ``value`` (keys and indices), without recursion."""
    found, stack = [], [((), value)]
    while stack:
        prefix, item = stack.pop()
        found.append(prefix)
        if isinstance(item, dict):
            stack.extend(((*prefix, key), sub) for key, sub in item.items())
        elif isinstance(item, list):
            stack.extend(((*prefix, i), sub) for i, sub in enumerate(item))
    return sorted(found, key=repr)


@st.composite
def results_case(draw):
    """``pevpm report DIR`` on a results.json with one to three values replaced by
    a value of another type, or the whole file damaged (BOM, non-UTF-8, deep)."""
    results = json.loads(json.dumps(RESULTS))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(results) if p]
        path = draw(st.sampled_from(paths))
        target = results
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = copy.deepcopy(draw(CONFUSED))   # never one object twice
    damage = draw(st.sampled_from(["none", "none", "bom", "latin1", "deep", "cut", "fifo"]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        folder = tmp / "report"
        folder.mkdir()
        text = json.dumps(results)
        path = folder / "results.json"
        if damage == "fifo":
            os.mkfifo(path)
        else:
            data = {"none": text.encode(), "bom": b"\xef\xbb\xbf" + text.encode(),
                    "latin1": text.encode()[:-2] + b"\xe9\xff}", "cut": text.encode()[:40],
                    "deep": b"[" * 50_000 + b"]" * 50_000}[damage]
            path.write_bytes(data)
        return [["report", str(folder)]]
    return case


# ---------------------------------------------------------------- very long literals

@st.composite
def long_literal_case(draw):
    """A whole number of 290 to 5,000 digits (or a float that overflows) where a
    user writes numbers: directives, -D, calibration, Python models, DP*Graph,
    --coll."""
    digits = draw(st.sampled_from([290, 299, 300, 301, 310, 400, 1000, 4300, 4301, 5000]))
    literal = draw(st.sampled_from(["9" * digits, "1" + "0" * digits, "0x" + "f" * digits,
                                    "1e400", "-1e400", "1" * digits + ".5",
                                    "inf", "nan"]))
    place = draw(st.sampled_from(["serial", "loop", "size", "define", "calibration",
                                  "python", "dpgraph", "coll", "product"]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        model = tmp / "m.c"
        extra: list[str] = []
        if place in ("serial", "loop", "size", "product"):
            value = f"{literal} * {literal}" if place == "product" else literal
            text = {"serial": f"// PEVPM Serial time = {value}\n",
                    "product": f"// PEVPM Serial time = {value}\n",
                    "loop": f"// PEVPM Loop iterations = {value}\n// PEVPM {{\n{SERIAL}"
                            "// PEVPM }\n",
                    "size": "// PEVPM Runon c1 = 0\n// PEVPM {\n// PEVPM Message type = "
                            f"MPI_Send\n// PEVPM & size = {value}\n// PEVPM & to = 1\n"
                            "// PEVPM }\n// PEVPM Runon c1 = 1\n// PEVPM {\n// PEVPM "
                            "Message type = MPI_Recv\n// PEVPM & size = 8\n// PEVPM & from = 0"
                            "\n// PEVPM }\n"}[place]
            _write(model, text)
        elif place in ("define", "calibration", "coll"):
            _write(model, "// PEVPM Serial time = 1e-9 * parameter t_x\n")
            if place == "define":
                extra = ["-D", f"t_x={literal}"]
            elif place == "coll":
                _write(model, SERIAL)
                extra = ["--coll", f"bcast_short={literal}"]
            else:
                calibration = _write(tmp / "c.json", '{"format": "pevpm-parameters/1", '
                                     f'"parameters": {{"t_x": {literal}}}}}')
                extra = ["--calibration", str(calibration)]
        elif place == "python":
            model = _write(tmp / "m.py", MODEL_FILE.replace("VALUE", literal if literal not in
                                                            ("inf", "nan") else
                                                            f"float({literal!r})"))
        else:
            graph = _write(tmp / "g.toml", f'[nodes]\na = [{literal}]\nb = [1]\n[[messages]]\n'
                           f'from = "a"\nto = "b"\nelements = {literal}\n'
                           "[send_modes.standard.sender]\nper_element = 1\nlatency = 0\n"
                           "[send_modes.standard.receiver]\nper_element = 1\nlatency = 0\n")
            return [["analytic", "dpgraph", str(graph)]]
        return [["show", str(model), *(extra if place == "define" else [])],
                ["predict", str(model), *PREDICT_2, *extra]]
    return case


# ---------------------------------------------------------------- deep nesting

@st.composite
def deep_case(draw):
    """Blocks nested 50 to 400 deep, call chains of 50 to 600 subroutines,
    cycles of calls, and Python models with 50 to 5,000 nested loops."""
    shape = draw(st.sampled_from(["Runon", "Condition", "Loop", "chain", "cycle", "python"]))
    depth = draw(st.sampled_from([50, 98, 99, 100, 101, 150, 400, 600, 5000]))
    openers = {"Runon": "// PEVPM Runon c1 = procnum >= 0",
               "Condition": "// PEVPM Condition c1 = 1",
               "Loop": "// PEVPM Loop iterations = 1"}

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        if shape in openers:
            levels = min(depth, 600)
            text = (f"{openers[shape]}\n// PEVPM {{\n" * levels + SERIAL
                    + "// PEVPM }\n" * levels)
            model = _write(tmp / "deep.c", text)
        elif shape in ("chain", "cycle"):
            length = min(depth, 600) if shape == "chain" else depth % 5 + 2
            lines = ["// PEVPM Call name = s0"]
            for i in range(length):
                last = i == length - 1
                inner = (("// PEVPM Call name = s0" if shape == "cycle" else SERIAL.strip())
                         if last else f"// PEVPM Call name = s{i + 1}")
                lines += [f"// PEVPM Subroutine name = s{i}", "// PEVPM {", inner, "// PEVPM }"]
            model = _write(tmp / "calls.c", "\n".join(lines) + "\n")
        else:
            model = _write(tmp / "loops.py", (
                "import contextlib\n\nfrom pevpm.model.builder import ModelBuilder\n\n\n"
                "def model():\n    b = ModelBuilder()\n    with contextlib.ExitStack() as s:\n"
                f"        for _ in range({depth}):\n            s.enter_context(b.loop(1))\n"
                "        b.serial(1e-6)\n    return b\n"))
        return [["show", str(model)], ["check", str(model)],
                ["predict", str(model), "-n", "2", "--runs", "4", "--workers", "2",
                 "--no-bounds", "--machine", "constant:latency=1us"]]
    return case


# ---------------------------------------------------------------- encodings

@st.composite
def encoding_case(draw):
    """A byte-order mark, bytes that are not UTF-8 or a NUL in a directive source, a
    Python model, a DP*Graph file or a calibration file."""
    kind = draw(st.sampled_from(["c", "f90", "py-directives", "py-model", "dpgraph",
                                 "calibration"]))
    how = draw(st.sampled_from(["bom", "bom", "latin1", "nul", "utf16"]))
    where = draw(st.integers(0, 3))

    def mangle(text: str) -> bytes:
        data = text.encode()
        if how == "bom":
            return b"\xef\xbb\xbf" + data
        if how == "utf16":
            return text.encode("utf-16")
        cut = min(len(data), [0, len(data) // 3, len(data) // 2, len(data)][where])
        return data[:cut] + (b"\xe9\xff" if how == "latin1" else b"\x00") + data[cut:]

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        if kind in ("c", "f90", "py-directives"):
            marker = {"c": "//", "f90": "!", "py-directives": "#"}[kind]
            suffix = {"c": ".c", "f90": ".f90", "py-directives": ".py"}[kind]
            model = _write(tmp / f"m{suffix}", mangle(LOOP.replace("//", marker)))
            return [["show", str(model)], ["predict", str(model), *PREDICT_2]]
        if kind == "py-model":
            model = _write(tmp / "model.py", mangle(MODEL_FILE.replace("VALUE", "1e-6")))
            return [["show", str(model)], ["predict", str(model), *PREDICT_2]]
        if kind == "dpgraph":
            graph = _write(tmp / "g.toml", mangle("[nodes]\na = [1, 2]\nb = [3]\n"))
            return [["analytic", "dpgraph", str(graph)]]
        model = _write(tmp / "m.c", "// PEVPM Serial time = parameter t_x\n")
        calibration = _write(tmp / "c.json", mangle(
            '{"format": "pevpm-parameters/1", "parameters": {"t_x": 1e-6}}'))
        return [["predict", str(model), *PREDICT_2, "--calibration", str(calibration)]]
    return case


# ---------------------------------------------------------------- special files

@st.composite
def special_file_case(draw):
    """A FIFO, a device, a folder or a dangling link where a command reads a file:
    the model, the profile, a calibration, a DP*Graph, an archive's part."""
    special = draw(st.sampled_from(["fifo", "device", "folder", "dangling"]))
    role = draw(st.sampled_from(["model", "profile", "calibration", "dpgraph", "events",
                                 "definitions"]))

    def place(path: Path) -> Path:
        if path.exists() or path.is_symlink():
            path.unlink()
        if special == "fifo":
            os.mkfifo(path)
        elif special == "device":
            os.symlink("/dev/zero", path)
        elif special == "folder":
            path.mkdir()
        else:
            os.symlink(path.parent / "no-such-file", path)
        return path

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        model = _write(tmp / "m.c", LOOP)
        if role == "model":
            return [["show", str(place(model))], ["predict", str(model), *PREDICT_2]]
        if role == "profile":
            path = place(tmp / "machine.db")
            return [["profile", "show", str(path)],
                    ["predict", str(model), *PREDICT_2[:-4], "--machine", str(path)]]
        if role == "calibration":
            path = place(tmp / "c.json")
            return [["predict", str(model), *PREDICT_2, "--calibration", str(path)]]
        if role == "dpgraph":
            return [["analytic", "dpgraph", str(place(tmp / "g.toml"))]]
        anchor = write_archive(tmp / "run", ping_records())
        part = (next(anchor.with_suffix("").rglob("*.evt")) if role == "events"
                else anchor.with_suffix(".def"))
        place(part)
        return [["replay", str(tmp / "run"), "--machine", "constant:latency=1us"],
                ["extract", str(tmp / "run"), "-o", str(tmp / "model.py")]]
    return case


# ---------------------------------------------------------------- hostile SQLite schemas

SCHEMA_DAMAGES = ("view", "endless-view", "index", "trigger", "temp-like", "huge-text")


@st.composite
def sqlite_case(draw):
    """A copy of the small profile whose table was replaced by a view (plain or an
    endless recursive query), an index of the same name, or given a trigger."""
    how = draw(st.sampled_from(SCHEMA_DAMAGES))
    table = draw(st.sampled_from(["meta", "runs", "blocks", "summaries", "histograms",
                                  "raw_times", "conditions"]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        path = tmp / "hostile.db"
        shutil.copyfile(profile, path)
        conn = sqlite3.connect(path)
        try:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?",
                                  (table,)).fetchone()
            if exists and how in ("view", "endless-view", "index"):
                conn.execute(f"ALTER TABLE {table} RENAME TO {table}_old")
            source = f"{table}_old" if exists else "meta"
            if how == "view":
                conn.execute(f"CREATE VIEW {table} AS SELECT * FROM {source}")
            elif how == "endless-view":
                conn.execute(f"CREATE VIEW {table} AS WITH RECURSIVE r(x) AS (SELECT 1 "
                             f"UNION ALL SELECT x + 1 FROM r) SELECT {source}.* FROM "
                             f"{source}, r")
            elif how == "index" and exists:
                conn.execute(f"CREATE INDEX {table} ON {table}_old (rowid)")
            elif how == "trigger" and exists:
                conn.execute(f"CREATE TRIGGER t AFTER INSERT ON {table} BEGIN "
                             f"DELETE FROM {table}; END")
            elif how == "huge-text":
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('name', ?)",
                             ("x" * 1_000_000,))
            conn.commit()
        except sqlite3.Error:
            pass
        finally:
            conn.close()
        model = _write(tmp / "m.c", LOOP)
        return [["profile", "show", str(path)],
                ["profile", "export-csv", str(path), "-o", str(tmp / "out.csv")],
                ["predict", str(model), *PREDICT_2[:-4], "--machine", str(path)]]
    return case


# ---------------------------------------------------------------- early Ctrl-C

@st.composite
def early_signal_case(draw):
    """A light command and a moment 0 to 0.8 s into it at which Ctrl-C comes:
    the argv is prefixed with ``@interrupt=SECONDS`` for the campaign's runner."""
    delay = draw(st.floats(0.0, 0.8))
    command = draw(st.sampled_from(["fit", "show", "check", "profile", "predict",
                                    "analytic"]))
    seed = draw(st.integers(0, 2**16))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        own = tmp / "machine.db"
        shutil.copyfile(profile, own)
        model = _write(tmp / "m.c", LOOP * random.Random(seed).randint(1, 3))
        argv = {"fit": ["fit", str(own), "--no-plots", "--no-store", "--no-progress"],
                "show": ["show", str(model)], "check": ["check", str(model)],
                "profile": ["profile", "show", str(own)],
                "predict": ["predict", str(model), *PREDICT_2],
                "analytic": ["analytic", "spmd", "--model", "bus-aio", "--preset", "qcrd",
                             "-p", "1..64*2", "-d", "1..8*2"]}[command]
        return [[f"@interrupt={delay:.3f}", *argv]]
    return case


HOSTILE_FAMILIES = {
    "outputs onto inputs": output_onto_input_case,
    "output folders": output_folder_case,
    "results.json types": results_case,
    "long literals": long_literal_case,
    "deep nesting": deep_case,
    "encodings": encoding_case,
    "special files": special_file_case,
    "hostile SQLite": sqlite_case,
    "early Ctrl-C": early_signal_case,
}
