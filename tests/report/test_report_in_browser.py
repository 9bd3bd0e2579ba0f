"""The report renders in headless Chromium with every plot loaded and no errors.

``make test`` installs Debian's chromium where it can; without it this test is
skipped with a message saying so.
"""

import re
import shutil
import subprocess

import pytest

from pevpm.report.html import write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed and could not be "
                    "installed here (make test tries apt-get install chromium)")
def test_report_renders_with_all_plots(tmp_path, sample_results):
    page = write_report(sample_results, str(tmp_path))
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
         "--virtual-time-budget=5000", "--dump-dom", f"file://{page}"],
        check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = re.search(r'data-plots-loaded="(\d+)/(\d+)"', proc.stdout)
    assert loaded, "the page's load handler did not run"
    ok, total = map(int, loaded.groups())
    assert total == 3 and ok == total
    console_errors = [line for line in proc.stderr.splitlines()
                      if "CONSOLE" in line and ("Uncaught" in line or "ERROR" in line)]
    assert not console_errors
