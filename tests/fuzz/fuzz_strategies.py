"""Hypothesis strategies for hostile pevpm input: expressions, directive
files (generated and mutated from the examples), Python model files,
damaged profiles and command lines.  Each ``*_case`` strategy draws a
function ``case(tmp, profile) -> list of argv`` that writes its files under
``tmp`` and returns the commands to run on them (``profile``: a small, whole
machine profile made by :func:`fuzz_harness.small_profile`).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*/*.c"))
#: A fast machine, tiny runs, in this process, a small event budget.
PREDICT = ["--runs", "2", "--workers", "1", "--no-bounds", "--seed", "1", "--machine",
           "constant:latency=1us", "--max-events", "20000"]

# ----------------------------------------------------------------- expressions

NAMES = ("procnum", "numprocs", "n", "i", "xsize", "MPI_ANY_SOURCE", "undefined_name")
FUNCS = {"min": 2, "max": 2, "abs": 1, "sqrt": 1, "log2": 1, "log": 1, "exp": 1, "pow": 2,
         "ceil": 1, "floor": 1, "uniform": 2, "exponential": 1, "gamma": 2}
NUMBERS = st.one_of(
    st.integers(-5, 70),
    st.sampled_from(["0", "-1", "1e308", "1e309", "1e-300", "1e300", "99999999999999999999",
                     "0x7fffffffffffffff", "0.5", "1e-9", "2147483648"]),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
)


def _binary(children):
    ops = st.sampled_from(["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=",
                           "&&", "||"])
    return st.tuples(children, ops, children).map(lambda t: f"({t[0]} {t[1]} {t[2]})")


def _call(children):
    def build(draw_name):
        name, args = draw_name
        return f"{name}({', '.join(args)})"
    return st.sampled_from(sorted(FUNCS)).flatmap(
        lambda f: st.lists(children, min_size=FUNCS[f], max_size=FUNCS[f] + (f == "gamma"))
        .map(lambda args, f=f: (f, args))).map(build)


EXPRESSIONS = st.recursive(
    st.one_of(NUMBERS.map(str), st.sampled_from(NAMES), st.just("parameter n"),
              st.just("sizeof(double)")),
    lambda children: st.one_of(
        _binary(children), _call(children),
        children.map(lambda e: f"-{e}"), children.map(lambda e: f"!{e}"),
        st.tuples(children, children, children).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}")),
    max_leaves=12,
)
#: Long flat sums and deep nesting: the parser's limits.
EXTREME_EXPRESSIONS = st.one_of(
    st.integers(1, 6000).map(lambda k: "+".join(["procnum"] * k)),
    st.integers(1, 400).map(lambda k: "(" * k + "1" + ")" * k),
    st.integers(1, 400).map(lambda k: "-" * k + "1"),
)


def expression_model(place: str, expr: str) -> str:
    """A small two-rank model with ``expr`` in one ``place``."""
    serial = expr if place == "time" else "1e-6"
    count = expr if place == "count" else "2"
    size = expr if place == "size" else "8"
    dest = expr if place == "dest" else "1"
    return "\n".join([
        "int xsize = 16;",
        "// PEVPM Parameter n = 3",
        f"// PEVPM Loop iterations = {count}",
        "// PEVPM &    index = i",
        "// PEVPM {",
        f"// PEVPM Serial time = {serial}",
        "// PEVPM Runon c1 = procnum == 0",
        "// PEVPM &     c2 = procnum == 1",
        "// PEVPM {",
        "// PEVPM Message type = MPI_Send", f"// PEVPM & size = {size}", f"// PEVPM & to = {dest}",
        "// PEVPM }",
        "// PEVPM {",
        "// PEVPM Message type = MPI_Recv", f"// PEVPM & size = {size}", "// PEVPM & from = 0",
        "// PEVPM }",
        "// PEVPM }",
        "",
    ])


@st.composite
def expression_case(draw):
    place = draw(st.sampled_from(["time", "count", "size", "dest"]))
    expr = draw(st.one_of(EXPRESSIONS, EXTREME_EXPRESSIONS) if draw(st.booleans())
                else EXPRESSIONS)
    numprocs = draw(st.sampled_from(["2", "3"]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        path = tmp / "expr.c"
        path.write_text(expression_model(place, expr))
        return [["predict", str(path), "-n", numprocs, *PREDICT]]
    return case


# ------------------------------------------------------------- directive files

DIRECTIVES = (
    "Serial time = {e}", "Serial time = {e} ms", "Loop iterations = {e}", "& index = i", "{", "}",
    "Message type = MPI_Send & size = {e} & to = {e}",
    "Message type = MPI_Recv & size = {e} & from = {e}",
    "Message type = MPI_Isend & size = {e} & to = {e} & req = r",
    "Message type = MPI_Irecv & size = {e} & from = MPI_ANY_SOURCE & req = r",
    "Message type = MPI_Wait & req = r", "Message type = MPI_Waitall",
    "Message type = MPI_Test & req = r",
    "Message type = MPI_Sendrecv & size = {e} & to = {e} & from = {e}",
    "Message type = MPI_Bcast & size = {e} & from = 0", "Message type = MPI_Barrier",
    "Message type = MPI_Allreduce & size = {e}", "Message type = MPI_Alltoall & size = {e}",
    "Runon c1 = {e}", "& c2 = {e}", "Condition c1 = {e}", "Parameter n = {e}",
    "Subroutine name = s", "Call name = s", "Default numprocs = {e}", "Processor description = p",
    "& timing basis = {e}",
)


@st.composite
def generated_directives(draw) -> str:
    lines = []
    for template in draw(st.lists(st.sampled_from(DIRECTIVES), min_size=1, max_size=25)):
        text = template
        while "{e}" in text:
            text = text.replace("{e}", draw(EXPRESSIONS), 1)
        head, *more = text.split(" & ")
        lines.append(f"// PEVPM {head}")
        lines.extend(f"// PEVPM & {attribute}" for attribute in more)
    return "\n".join(lines) + "\n"


@st.composite
def mutated_example(draw) -> str:
    """A real example with lines dropped, repeated or swapped, and characters changed."""
    lines = draw(st.sampled_from(EXAMPLES)).read_text().splitlines()
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "swap", "chars", "value"]))
        if action == "drop":
            del lines[i]
        elif action == "repeat":
            lines.insert(i, lines[i])
        elif action == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif action == "chars" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            junk = draw(st.text(alphabet="{}&=()%*+-/?:!<>0123456789e.xPEVM \t\x00\u00e9",
                                max_size=4))
            lines[i] = lines[i][:k] + junk + lines[i][k + 1:]
        elif action == "value" and "=" in lines[i]:
            head = lines[i].rsplit("=", 1)[0]
            lines[i] = f"{head}= {draw(EXPRESSIONS)}"
    return "\n".join(lines) + "\n"


@st.composite
def directive_case(draw):
    text = draw(st.one_of(generated_directives(), mutated_example()))
    numprocs = draw(st.sampled_from(["1", "2", "4"]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        path = tmp / "model.c"
        path.write_text(text)
        return [["show", str(path)], ["check", str(path)],
                ["predict", str(path), "-n", numprocs, *PREDICT]]
    return case


# ----------------------------------------------------------- Python model files

PY_BODIES = (
    "def model():\n    b = ModelBuilder()\n    b.serial({e!r})\n    return b\n",
    ("def model():\n    b = ModelBuilder()\n    with b.loop({e!r}):\n        b.serial(1e-6)\n"
    "    return b.build()\n"),
    "def model():\n    b = ModelBuilder()\n    b.send({e!r}, dest=1)\n    return b\n",
    "MODEL = Model(body=None)\n",
    "MODEL = Model(body=(1, 2))\n",
    "model = 5\n",
    "MODEL = 'a string'\n",
    "def model():\n    raise SystemExit(3)\n",
    "class Boom(BaseException):\n    pass\n\ndef model():\n    raise Boom('bang')\n",
    "def model():\n    return model()\n",
    "def model():\n    import sys\n    sys.exit()\n",
    "def model():\n    return [1] * 10\n",
    "def model():\n    return ModelBuilder().build\n",
    "def model(:\n    pass\n",
    "x = 1\x00\ndef model():\n    pass\n",
    "def model():\n    b = ModelBuilder()\n    b.serial({e!r})\n    return None\n",
    "def model():\n    raise MemoryError\n",
    "def model():\n    raise RecursionError('deep')\n",
)


@st.composite
def python_model_case(draw):
    body = draw(st.sampled_from(PY_BODIES)).format(e=draw(EXPRESSIONS))
    text = ("from pevpm.model.builder import ModelBuilder\n"
            "from pevpm.model.ast import Model\n\n" + body)

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        path = tmp / "model.py"
        path.write_text(text)
        return [["show", str(path)], ["predict", str(path), "-n", "2", *PREDICT]]
    return case


# ------------------------------------------------------------- damaged profiles

#: Values a damaged cell may hold.
BAD_VALUES = (-1, 0, -4096, "text", 9e999, -9e999, b"\x01\x02\x03", "{", "[1, 2]", "NaN",
              '{"50": "x"}', '{"50": 1e999}', "", 2**62)
TABLES = ("meta", "runs", "clock_sync", "blocks", "raw_times", "outliers", "histograms",
          "summaries", "fits", "calibration")
MESSAGE_MODEL = """\
// PEVPM Runon c1 = procnum == 0
// PEVPM &     c2 = procnum == 1
// PEVPM {
// PEVPM Message type = MPI_Send
// PEVPM & size = 1024
// PEVPM & to = 1
// PEVPM }
// PEVPM {
// PEVPM Message type = MPI_Recv
// PEVPM & size = 1024
// PEVPM & from = 0
// PEVPM }
"""


def damage_sql(path: Path, statement: str, args=()) -> None:
    """Run one damaging statement on the profile (constraint failures are skipped)."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(statement, args)
    except (sqlite3.Error, UnicodeDecodeError):
        pass
    finally:
        conn.close()


@st.composite
def damage(draw):
    """A function that damages a profile file in place."""
    kind = draw(st.sampled_from(["bytes", "truncate", "cell", "drop", "delete", "meta"]))
    if kind == "bytes":
        edits = draw(st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=1, max_size=16)),
                              min_size=1, max_size=8))

        def apply(path: Path) -> None:
            data = bytearray(path.read_bytes())
            for where, junk in edits:
                at = int(where * (len(data) - len(junk)))
                data[at:at + len(junk)] = junk
            path.write_bytes(bytes(data))
        return apply
    if kind == "truncate":
        keep = draw(st.floats(0, 0.99))
        return lambda path: path.write_bytes(path.read_bytes()[:int(keep * path.stat().st_size)])
    table = draw(st.sampled_from(TABLES))
    if kind == "cell":
        value = draw(st.sampled_from(BAD_VALUES))
        pick = draw(st.integers(0, 3))

        def apply(path: Path) -> None:
            conn = sqlite3.connect(path)
            try:
                columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            except (sqlite3.Error, UnicodeDecodeError):
                columns = []
            finally:
                conn.close()
            column = columns[pick % len(columns)] if columns else "x"
            damage_sql(path, f"UPDATE {table} SET {column} = ? WHERE rowid IN "
                       f"(SELECT rowid FROM {table} LIMIT 1 OFFSET {pick})", (value,))
        return apply
    if kind == "drop":
        return lambda path: damage_sql(path, f"DROP TABLE {table}")
    if kind == "delete":
        return lambda path: damage_sql(path, f"DELETE FROM {table} WHERE rowid % 3 = 0")
    value = draw(st.sampled_from(["x", "2", "0", "-1", "1.5", ""]))
    key = draw(st.sampled_from(["schema_version", "format"]))
    return lambda path: damage_sql(path, "UPDATE meta SET value = ? WHERE key = ?", (value, key))


@st.composite
def profile_case(draw):
    """Damage a copy of a small, whole profile and read it three ways."""
    damages = draw(st.lists(damage(), min_size=1, max_size=3))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        path = tmp / "damaged.db"
        shutil.copyfile(profile, path)
        for apply in damages:
            apply(path)
        model = tmp / "pair.c"
        model.write_text(MESSAGE_MODEL)
        return [["profile", "show", str(path)],
                ["profile", "export-csv", str(path), "-o", str(tmp / "out.csv")],
                ["predict", str(model), "-n", "2", *PREDICT[:-4], "--machine", str(path)]]
    return case


# ---------------------------------------------------------------- command lines

HOSTILE = ("-1", "0", "nan", "inf", "-inf", "1e400", "99999999999999999999999999", "",
           "abc", "1.5", "1e-300", "2", "3..2", "1..99999999999999", "0x10", "1_000")


@st.composite
def command_line_case(draw):
    value = draw(st.sampled_from(HOSTILE))
    other = draw(st.sampled_from(HOSTILE))
    template = draw(st.sampled_from([
        ["predict", "{model}", "-n", "{v}", *PREDICT],
        ["predict", "{model}", "-n", "2", "--runs", "{v}", "--workers", "1"],
        ["predict", "{model}", "-n", "2", *PREDICT, "--seed", "{v}"],
        ["predict", "{model}", "-n", "2", "-D", "n={v}", *PREDICT],
        ["predict", "{model}", "-n", "2", "--max-events", "{v}", "--runs", "1", "--workers",
         "1"],
        ["predict", "{model}", "-n", "2", "--max-time", "{v}", *PREDICT],
        ["predict", "{model}", "-n", "2", "--max-wall", "{v}", *PREDICT],
        ["predict", "{model}", "-n", "2", "--ppn", "{v}", *PREDICT],
        ["predict", "{model}", "-n", "2", "--workers", "{v}", "--runs", "1"],
        ["predict", "{model}", "-n", "2", "--runs", "1", "--workers", "1", "--machine",
         "hockney:latency={v}us,bandwidth={w}MB/s"],
        ["predict", "{model}", "-n", "2", "--runs", "1", "--workers", "1", "--machine",
         "constant:latency=1us,ppn={v}"],
        ["predict", "{model}", "-n", "2", "--runs", "1", "--workers", "1", "--machine",
         "loggp:L={v},o={w},g=1us,G=1ns"],
        ["predict", "{model}", "-n", "2", *PREDICT, "--trace", "{path}"],
        ["predict", "{model}", "-n", "2", *PREDICT, "--topology", "torus:{v}x{w}"],
        ["predict", "{model}", "-n", "2", *PREDICT, "--topology",
         "fat-tree:k={v},n=2,oversub={w},bw=1GB/s"],
        ["machine", "show", "dragonfly:groups={v},chassis=1,routers={w},nodes=1", "-n", "2"],
        ["machine", "show", "switch:nodes=4,bw={v}GB/s,lat={w}us", "-o", "{path}"],
        ["show", "{model}", "-D", "n={v}"],
        ["analytic", "laws", "-f", "{v}", "-n", "1..8*2"],
        ["analytic", "laws", "-f", "0.9", "-n", "{v}"],
        ["analytic", "laws", "-f", "0.9", "-r", "{v}", "-n", "1,2,4"],
        ["analytic", "spmd", "--model", "bus-aio", "--preset", "qcrd", "-p", "{v}", "-d", "1,2"],
        ["analytic", "spmd", "--model", "bus-aio", "--preset", "qcrd", "-p", "1,2", "-d", "{v}"],
        ["profile", "export-csv", "{profile}", "-o", "{path}"],
        ["profile", "plot", "{profile}", "-o", "{path}"],
        ["machine", "new", "-o", "{path}", "--latency", "{v}us", "--bandwidth", "{w}GB/s",
         "--sizes", "0,1024", "--placements", "1x2", "--samples", "20"],
    ]))
    path_kind = draw(st.sampled_from(["missing-folder", "folder", "file", "new"]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        model = tmp / "loop.c"
        model.write_text("// PEVPM Parameter n = 2\n// PEVPM Loop iterations = n\n// PEVPM {\n"
                         "// PEVPM Serial time = 1e-6\n// PEVPM }\n")
        existing = tmp / "existing.txt"
        existing.write_text("keep me\n")
        path = {"missing-folder": tmp / "no" / "such" / "out.x", "folder": tmp,
                "file": existing, "new": tmp / "new-output.json"}[path_kind]
        fill = {"{model}": str(model), "{v}": value, "{w}": other, "{path}": str(path),
                "{profile}": str(profile)}
        argv = []
        for word in template:
            for key, text in fill.items():
                word = word.replace(key, text)
            argv.append(word)
        return [argv]
    return case
