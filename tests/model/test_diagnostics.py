"""Malformed directives: each gives one `file:line:col: message`, the source
line and a caret under that column."""

import pytest

from pevpm.errors import DirectiveError
from pevpm.model.directives import parse_directives

CASES = [
    ("int x;\n// PEVPM Serail time = 1\n",
     "bad.c:2:10: unknown directive 'Serail' (did you mean 'Serial'?)"),
    ("// PEVPM Message type = MPI_Send\n// PEVPM &       sise = 4\n// PEVPM &       to = 1\n",
     "bad.c:2:18: Message has no attribute 'sise' (did you mean 'size'?)"),
    ("// PEVPM Loop iterations = 3\n// PEVPM {\n// PEVPM Serial time = 1\n",
     "bad.c:2:10: block opened here is never closed with '// PEVPM }'"),
    ("// PEVPM Serial time = 1\n// PEVPM }\n",
     "bad.c:2:10: '}' closes no block"),
    ("int x;\n// PEVPM &  size = 4\n",
     "bad.c:2:10: continuation line '&' with no directive to continue"),
    ("int xsize = 256;\n// PEVPM Runon c1 = procnum < xsiz\n// PEVPM {\n// PEVPM }\n",
     "bad.c:2:31: Runon condition c1 uses unknown name 'xsiz' (did you mean 'xsize'?)"),
    (("// PEVPM Condition c1 = 2\n// PEVPM &         c2 = -1\n"
      "// PEVPM {\n// PEVPM }\n// PEVPM {\n// PEVPM }\n"),
     "bad.c:2:25: negative Condition weight -1"),
    (("#define W 0\n// PEVPM Condition c1 = 0\n// PEVPM &         c2 = W\n"
      "// PEVPM {\n// PEVPM }\n// PEVPM {\n// PEVPM }\n"),
     "bad.c:2:10: Condition weights are all zero; no arm can be taken"),
    ("// PEVPM Message type = MPI_Sned\n// PEVPM &       to = 1\n",
     "bad.c:1:25: unknown MPI operation 'MPI_Sned' (did you mean 'MPI_Send'?)"),
    ("// PEVPM Serial time = 3.24 / (numprocs\n",
     "bad.c:1:40: expected ')', found end of expression"),
    ("// PEVPM Runon c1 = 0\n// PEVPM &      c2 = 1\n// PEVPM {\n// PEVPM }\n",
     ("bad.c:2:17: Runon arm 'c2' has no block; give each arm a '// PEVPM {' ... "
      "'// PEVPM }' block, empty if need be")),
    ("// PEVPM Subroutine name = halo\n// PEVPM {\n// PEVPM }\n// PEVPM Call name = hallo\n",
     "bad.c:4:10: call of undefined subroutine 'hallo' (did you mean 'halo'?)"),
    (("// PEVPM Loop iterations = 3\n// PEVPM &    index = i\n// PEVPM {\n"
      "// PEVPM Runon c1 = 0\n// PEVPM {\n"
      "// PEVPM Loop iterations = 2\n// PEVPM &    index = i\n// PEVPM {\n// PEVPM }\n"
      "// PEVPM }\n// PEVPM }\n"),
     ("bad.c:7:23: loop index 'i' is taken by the enclosing loop at bad.c:1:10; nested loops "
      "need distinct indices")),
]


@pytest.mark.parametrize("text, expected", CASES, ids=[c[1].split(": ", 1)[1][:40]
                                                         for c in CASES])
def test_malformed_input_is_placed_and_explained(text, expected):
    with pytest.raises(DirectiveError) as info:
        parse_directives(text, "bad.c")
    first, source, caret = str(info.value).split("\n")
    assert first == expected
    line, col = (int(n) for n in expected.split(":")[1:3])
    assert source == text.splitlines()[line - 1]
    assert caret == " " * (col - 1) + "^"
    assert info.value.where == ":".join(expected.split(":")[:3])


def test_caret_keeps_tabs_so_it_lines_up():
    with pytest.raises(DirectiveError) as info:
        parse_directives("\t\t// PEVPM Serial time = nope\n", "tab.c")
    assert str(info.value).splitlines()[2] == "\t\t" + " " * 23 + "^"
