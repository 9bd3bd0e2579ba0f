"""A trace archive with a FIFO where a file belongs is refused before the OTF2
library opens it (it would wait forever for a writer); raw metadata without a
record size says so (issue 30, items 4 and 5)."""

import os
import shutil
from pathlib import Path

import pytest
from test_raw_damage import write_raw

from pevpm.cli import main
from pevpm.errors import PevpmError
from pevpm.trace.raw import read_raw


def _replace_with_fifo(path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize("part", ["events", "definitions"])
@pytest.mark.parametrize("command", ["replay", "extract"])
def test_a_fifo_in_an_archive_is_refused(ping_archive, tmp_path, capsys, part, command):
    anchor = next(ping_archive.glob("*.otf2"))
    target = (next(anchor.with_suffix("").rglob("*.evt")) if part == "events"
              else anchor.with_suffix(".def"))
    _replace_with_fifo(target)
    argv = ([command, str(ping_archive), "--machine", "constant:latency=1e-6"]
            if command == "replay" else
            [command, str(ping_archive), "-o", str(tmp_path / "model.py")])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{target}: is not a regular file (a FIFO)" in err and "Traceback" not in err


def test_raw_metadata_without_a_record_size(tmp_path):
    raw = write_raw(tmp_path / "raw")
    meta = raw / "rank-0.txt"
    meta.write_text(meta.read_text().replace("record 80\n", ""))
    with pytest.raises(PevpmError) as caught:
        read_raw(raw)
    assert "None" not in str(caught.value)
    assert "no 'record' line" in str(caught.value)
    shutil.rmtree(raw)


#: A two-rank archive from the fuzz campaign (issue 30) whose events hold an
#: attribute value the otf2 package cannot decode ("Unexpected type.").
UNDECODABLE = Path(__file__).parent / "data" / "undecodable_attribute"


@pytest.mark.parametrize("command", ["replay", "extract"])
def test_an_attribute_the_otf2_package_cannot_decode(tmp_path, capsys, command):
    archive = tmp_path / "trace"
    shutil.copytree(UNDECODABLE, archive)
    argv = ([command, str(archive), "--machine", "constant:latency=1us"]
            if command == "replay" else [command, str(archive), "-o", str(tmp_path / "m.py")])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "not a readable OTF2 archive" in err
