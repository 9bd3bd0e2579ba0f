"""Property tests: models built in Python survive printing and parsing, and
no input, however mangled, makes the parser fail with anything but its own
error type."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pevpm.errors import PevpmError
from pevpm.model.ast import Link, Network
from pevpm.model.builder import ModelBuilder
from pevpm.model.directives import parse_directives
from pevpm.model.lint import lint_source
from pevpm.model.printer import format_tree, to_directives

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*/*.c"))
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

names = st.from_regex(r"x[a-z0-9_]{0,4}", fullmatch=True)
numbers = st.one_of(st.integers(-10**6, 10**6),
                    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
# Constants take part in load-time checks (negative times, zero weights), so
# the generator keeps them non-negative; parameters are free.
constant_values = st.one_of(st.integers(0, 10**6), st.floats(0, 1e6))


LEAVES = ["procnum", "numprocs", "sizeof(double)", "sizeof(char)"]


def expression(draw, scope, nonnegative=False, depth=0):
    """Expression text over the names in ``scope``; with ``nonnegative`` its
    constant parts stay >= 0.  Divisors are positive literals."""
    shape = draw(st.integers(0, 9)) if depth < 2 else 0
    if shape <= 3:
        leaf = draw(st.integers(0, 4))
        if leaf == 0:
            return str(draw(st.integers(0, 1000)))
        if leaf == 1:
            return repr(draw(st.floats(0, 1e3)))
        if leaf == 2 or not scope:
            return draw(st.sampled_from(LEAVES))
        return draw(st.sampled_from(sorted(scope)))

    def sub():
        return expression(draw, scope, nonnegative, depth + 1)
    if shape <= 5:
        op = draw(st.sampled_from(["+", "*", "==", "<", "&&", "||", ">="]))
        return f"({sub()} {op} {sub()})"
    if shape == 6:
        return f"{sub()} {draw(st.sampled_from(['/', '%']))} {draw(st.integers(1, 9))}"
    if shape == 7:
        return f"{sub()} ? {sub()} : {sub()}"
    if shape == 8 or nonnegative:
        return f"{draw(st.sampled_from(['min', 'max']))}({sub()}, {sub()})"
    return f"{draw(st.sampled_from(['-', '!']))}({sub()})"


@st.composite
def statements(draw, builder, scope, subroutines, depth):
    kind = draw(st.sampled_from(["serial", "message", "message", "loop", "condition",
                                 "runon", "call"] if depth < 2 else ["serial", "message"]))
    def value():
        return expression(draw, scope, nonnegative=True)

    def rank():
        return expression(draw, scope)

    if kind == "serial":
        builder.serial(value(), on=draw(st.one_of(st.none(), st.sampled_from(
            ["perseus", "orion", "time", "s"]))))
    elif kind == "message":
        op = draw(st.sampled_from(["send", "recv", "isend", "irecv", "sendrecv", "wait",
                                   "waitall", "test", "collective"]))
        tag = draw(st.sampled_from([None, rank(), "MPI_ANY_TAG"]))
        req = draw(names)
        if op == "send":
            builder.send(value(), dest=rank(), tag=tag)
        elif op == "recv":
            builder.recv(value(), source=draw(st.sampled_from([rank(), "MPI_ANY_SOURCE"])),
                         tag=tag)
        elif op == "isend":
            builder.isend(value(), dest=rank(), request=req, tag=tag)
        elif op == "irecv":
            builder.irecv(value(), source=rank(), request=req, tag=tag)
        elif op == "sendrecv":
            builder.sendrecv(value(), dest=rank(), source=rank(), tag=tag,
                             recv_size=draw(st.sampled_from([None, value()])))
        elif op == "wait":
            builder.wait(req)
        elif op == "test":
            builder.test(req)
        elif op == "waitall":
            builder.waitall(draw(st.lists(names, max_size=3)))
        else:
            builder.collective(draw(st.sampled_from(["MPI_Bcast", "MPI_Barrier", "MPI_Reduce",
                                                     "MPI_Alltoall", "MPI_Allreduce"])),
                               value(), root=draw(st.sampled_from([None, rank()])))
    elif kind == "loop":
        # a fresh name: nested loops may not share an index
        index = draw(st.one_of(st.none(), names.filter(lambda n: n not in scope)))
        with builder.loop(value(), index=index):
            inner = scope | {index} if index else scope
            for _ in range(draw(st.integers(0, 3))):
                draw(statements(builder, inner, subroutines, depth + 1))
    elif kind in ("condition", "runon"):
        opener = builder.condition if kind == "condition" else builder.runon
        if kind == "condition":
            def guard():
                return draw(st.sampled_from([draw(st.integers(1, 9)), f"{value()} + 1"]))
        else:
            def guard():
                return draw(st.sampled_from([draw(st.integers(0, 9)), rank(), "1,2,5..7"]))
        arm_names = draw(st.one_of(st.none(), st.lists(names, min_size=3, max_size=3,
                                                        unique=True)))
        with opener() as arms:
            for i in range(draw(st.integers(1, 3))):
                with arms.case(_runon_list(guard()), arm_names[i] if arm_names else None):
                    for _ in range(draw(st.integers(0, 2))):
                        draw(statements(builder, scope, subroutines, depth + 1))
    elif subroutines:
        builder.call(draw(st.sampled_from(sorted(subroutines))))
    else:
        builder.serial(value())


def _runon_list(guard):
    """The builder takes expressions; a rank list becomes its predicate."""
    if guard == "1,2,5..7":
        return "procnum == 1 || procnum == 2 || procnum >= 5 && procnum <= 7"
    return guard


@st.composite
def models(draw):
    constants = draw(st.dictionaries(names, constant_values, max_size=3))
    parameters = draw(st.dictionaries(names, numbers, max_size=3))
    b = ModelBuilder(constants=constants, parameters=parameters)
    scope = set(constants) | set(parameters)
    for name, basis in draw(st.dictionaries(st.sampled_from(["perseus", "orion"]),
                                            st.floats(1, 5000), max_size=2)).items():
        b.processor(name, basis)
    if draw(st.booleans()):
        b.network(Network("net", (Link("l0", "a", "b", "p.db"),)))
    defaults = draw(st.fixed_dictionaries({}, optional={
        "processor": st.sampled_from(["perseus", "orion"]),
        "numprocs": st.integers(1, 512), "speed": st.floats(1, 5000),
        "speeds": st.dictionaries(st.integers(0, 64), st.floats(1, 5000), min_size=1),
        "network": st.just("net")}))
    if defaults:
        b.defaults(**defaults)
    subroutines = draw(st.lists(names, max_size=2, unique=True))
    for name in subroutines:
        with b.subroutine(name):
            for _ in range(draw(st.integers(0, 2))):
                draw(statements(b, scope, set(), 1))
    for _ in range(draw(st.integers(0, 4))):
        draw(statements(b, scope, set(subroutines), 0))
    return b.build()


@PROPERTY
@given(models(), st.sampled_from(["c", "fortran", "python"]))
def test_built_models_print_and_parse_back_equal(model, language):
    text = to_directives(model, language)
    assert parse_directives(text, "gen", language) == model
    format_tree(model)


def _mutate(text, draw):
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "cut"]))
        if action == "delete":
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif action == "insert":
            at = draw(st.integers(0, len(lines[i])))
            junk = draw(st.text(alphabet="{}&=,.()-+*/%!<>?:; 0123456789abcpPrmsx_\t",
                                max_size=6))
            lines[i] = lines[i][:at] + junk + lines[i][at:]
        else:
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + lines[i][at + draw(st.integers(1, 8)):]
    return "\n".join(lines)


def _parse_or_own_error(text, language="c"):
    try:
        model = parse_directives(text, "fuzz.c", language)
    except PevpmError:
        return
    # Whatever parses must also print, lint and round-trip.
    assert parse_directives(to_directives(model, language), "again", language) == model
    format_tree(model)
    try:
        lint_source(text, "fuzz.c", language)
    except PevpmError:
        raise AssertionError("lint failed on a file that parses") from None


@PROPERTY
@given(st.data())
def test_mutated_examples_fail_only_with_directive_errors(data):
    path = data.draw(st.sampled_from(EXAMPLES))
    _parse_or_own_error(_mutate(path.read_text(), data.draw))


@PROPERTY
@given(st.binary(max_size=400), st.sampled_from(["c", "fortran", "python"]))
def test_random_bytes_fail_only_with_directive_errors(blob, language):
    _parse_or_own_error(blob.decode("utf-8", errors="replace"), language)


directive_noise = st.lists(st.tuples(
    st.sampled_from(["// PEVPM ", "// PEVPM & ", "// PEVPM {", "// PEVPM }", "int a = "]),
    st.text(alphabet="SerialMsgLopCndRuTyzx{}&=,.()-+*/%!<>?:;0123456789 _", max_size=30)),
    max_size=12)


@PROPERTY
@given(directive_noise)
def test_directive_shaped_noise_fails_only_with_directive_errors(lines):
    _parse_or_own_error("\n".join(prefix + body for prefix, body in lines))
