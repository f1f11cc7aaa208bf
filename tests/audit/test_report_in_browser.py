"""The HTML report opens in a real headless browser with every plot visible.

CI installs Debian's chromium (``.ci/run``); on a machine without it the test
is skipped, except under CI where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.report import build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

SCENARIO = """
[audit]
name = "browser"
description = "FedCG naive and secure on Iris, two landmark counts"
protocols = ["fedcg-naive", "fedcg-secure"]
dataset = "iris"
partition = "hybrid:cohorts=2,groups=2,centres=per-cohort"
backends = ["plain"]

[sweep]
n_landmarks = [3, 10]

[[attacks]]
name = "multilateration"
as = ["server"]
scorer = "point-recovery"
show = 3

[[attacks]]
name = "gram-inference"
as = ["server"]
"""

CHECK = """
<script>
window.addEventListener('load', () => {
  const imgs = [...document.querySelectorAll('img.plot')];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100);
  document.body.setAttribute('data-plots', imgs.length + '/' + ok.length);
});
</script>
"""


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium (see .ci/run) for the browser test.")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    root = tmp_path_factory.mktemp("browser")
    spec_path = root / "browser.toml"
    spec_path.write_text(textwrap.dedent(SCENARIO))
    run_audit(load_spec(spec_path), root / "out")
    build_report(root / "out")
    return root / "out"


def chromium(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={cwd / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120, check=False, cwd=cwd)


def test_every_plot_loads_in_the_browser(report_dir: Path) -> None:
    page = report_dir / "report.html"
    html = page.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html  # self-contained
    probe = report_dir / "probe.html"
    probe.write_text(html.replace("</body>", CHECK + "</body>"), encoding="utf-8")
    result = chromium("--virtual-time-budget=5000", "--dump-dom", probe.as_uri(), cwd=report_dir)
    assert result.returncode == 0, result.stderr[-2000:]
    marker = result.stdout.split('data-plots="')[1].split('"')[0]
    total, loaded = (int(x) for x in marker.split("/"))
    assert total >= 3 and loaded == total
    assert "Reconstructions (kept at the scenario" in html  # show = 3 asked for them


def test_screenshot_shows_a_rendered_page(report_dir: Path) -> None:
    shot = report_dir / "shot.png"
    result = chromium("--window-size=1280,2400", f"--screenshot={shot}",
                      (report_dir / "report.html").as_uri(), cwd=report_dir)
    assert result.returncode == 0, result.stderr[-2000:]
    from PIL import Image

    image = Image.open(shot).convert("L")
    colours = image.getcolors(maxcolors=1 << 16)
    assert image.size == (1280, 2400)
    assert colours is None or len(colours) > 50  # text and plots, not a blank page
