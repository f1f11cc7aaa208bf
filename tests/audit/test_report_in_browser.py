"""The quick-start report opens in a real headless browser, offline, with every plot visible,
a headline per adversary, the glossary, and frontier points that name their configurations.

The quick-start scenario is narrowed to two landmark counts and two backends to keep the test
short. CI installs Debian's chromium (``.ci/run``); on a machine without it the test is
skipped, except under CI where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fedsec.audit import load_spec, run_audit
from fedsec.report import build_report
from fedsec.report.frontier import frontier_figure, frontier_points

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

QUICKSTART = Path(__file__).resolve().parents[2] / "audits" / "quickstart.toml"
#: Offline: every request goes to a port where nothing listens.
OFFLINE = ["--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]

CHECK = """
<script>
window.addEventListener('load', () => {
  const imgs = [...document.querySelectorAll('img.plot')];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100);
  const svgs = [...document.querySelectorAll('figure.plot svg')];
  const drawn = svgs.filter(s => s.getBoundingClientRect().width > 300
                                 && s.getBoundingClientRect().height > 200);
  const titled = [...document.querySelectorAll('figure.plot svg g.point title')];
  const heads = [...document.querySelectorAll('section.headline')].map(h =>
      h.getAttribute('data-adversary') + '=' + h.querySelectorAll('li').length);
  const terms = [...document.querySelectorAll('dl dt')].map(t => t.textContent);
  document.body.setAttribute('data-plots', imgs.length + '/' + ok.length);
  document.body.setAttribute('data-svgs', svgs.length + '/' + drawn.length + '/' +
                             titled.length);
  document.body.setAttribute('data-headlines', heads.join(','));
  document.body.setAttribute('data-glossary', terms.join('|'));
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
    text = QUICKSTART.read_text(encoding="utf-8")
    text = text.replace('backends = ["plain", "noise", "ckks"]', 'backends = ["plain", "noise"]')
    text = text.replace("n_landmarks = [2, 3, 5, 10, 20]", "n_landmarks = [2, 10]")
    text = text.replace('scorer = "point-recovery"', 'scorer = "point-recovery"\nshow = 3')
    assert text.count("show = 3") == 1 and 'backends = ["plain", "noise"]' in text
    spec_path = root / "quickstart.toml"
    spec_path.write_text(text, encoding="utf-8")
    run_audit(load_spec(spec_path), root / "out")
    build_report(root / "out")
    return root / "out"


def chromium(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={cwd / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120, check=False, cwd=cwd)


def attribute(dom: str, name: str) -> str:
    return dom.split(f'{name}="')[1].split('"')[0]


def test_the_report_reads_offline_in_the_browser(report_dir: Path) -> None:
    page = report_dir / "report.html"
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing to fetch
    probe = report_dir / "probe.html"
    probe.write_text(html.replace("</body>", CHECK + "</body>"), encoding="utf-8")
    result = chromium(*OFFLINE, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri(),
                      cwd=report_dir)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    total, loaded = (int(x) for x in attribute(dom, "data-plots").split("/"))
    assert total >= 2 and loaded == total
    svgs, drawn, titled = (int(x) for x in attribute(dom, "data-svgs").split("/"))
    assert svgs == 2 and drawn == svgs  # one interactive frontier per attack, drawn
    assert titled >= 8  # every point (8 configurations per frontier) names itself on hover
    heads = dict(h.split("=") for h in attribute(dom, "data-headlines").split(","))
    assert heads == {"server": "2"}  # one headline for the one adversary, a sentence per attack
    assert "Worst leak:" in dom
    terms = attribute(dom, "data-glossary").split("|")
    assert {"advantage", "baseline", "distance_error", "relative_error"} <= set(terms)
    assert "Reconstructions (kept at the scenario" in html  # show = 3 asked for them


def test_no_point_that_was_not_measured_is_in_a_pareto_set(report_dir: Path) -> None:
    report = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    for attack in ("multilateration", "gram-inference"):
        points, best, _ = frontier_points(report["configurations"], attack, "server")
        hidden = {(p[0], p[1]) for p in points if not p[2]}
        assert best and not hidden & set(best)
        assert any(not p[2] for p in points)  # each attack misses one protocol: drawn apart


def test_no_legend_covers_a_data_point(report_dir: Path) -> None:
    report = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    for attack in ("multilateration", "gram-inference"):
        drawn = frontier_figure(report["configurations"], attack, "server")
        assert drawn is not None
        fig = drawn[0]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend().get_window_extent(renderer)
            for collection in ax.collections:
                for x, y in collection.get_offsets():
                    px, py = ax.transData.transform((x, y))
                    assert not legend.contains(px, py)


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
