"""``pevpm profile show`` prints the eager limit ``pevpm bench`` measured (issue 29)."""

import shutil

from pevpm.cli import main
from pevpm.profile.builtin import resolve_profile
from pevpm.profile.store import ProfileWriter


def test_profile_show_prints_the_measured_eager_limit(tmp_path, capsys):
    path = tmp_path / "machine.db"
    shutil.copy(resolve_profile("default"), path)
    with ProfileWriter.open(path) as writer:
        writer.set_metadata(eager="8112")
    assert main(["profile", "show", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("eager limit: 8,112 B (measured: the largest blocking send that returned before "
            "its receive was posted)") in lines


def test_profile_show_says_when_the_eager_limit_was_not_measured(capsys):
    assert main(["profile", "show", "default"]) == 0
    assert ("eager limit: not measured (predictions assume MPICH's nominal 65,536 B; "
            "--machine PROFILE:eager=BYTES sets it)") in capsys.readouterr().out.splitlines()
