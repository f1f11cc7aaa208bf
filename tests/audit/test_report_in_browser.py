"""The quick-start report opens in a real headless browser, offline, with every plot visible,
a headline per adversary, the glossary, frontier points that name their configurations, the
worst leak on the records (not a Gram matrix), what stops each attack (the protocol variant,
with its cost and what it lets in), not-applicable points in a strip beside the advantage axis
(never at 0), and one colour per configuration in every frontier.

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
  const colours = {};
  let apart = 0;
  for (const svg of svgs) {
    const marks = [...svg.querySelectorAll('g.point')].map(g => {
      const m = g.querySelector('use, path');
      const style = getComputedStyle(m);
      const colour = style.fill === 'none' ? style.stroke : style.fill;
      (colours[g.getAttribute('data-configuration')] ||= new Set()).add(colour);
      return [g.querySelector('title').textContent, m.getBoundingClientRect().x];
    });
    const away = marks.filter(m => m[0].startsWith('not applicable')).map(m => m[1]);
    const drawn = marks.filter(m => m[0].startsWith('advantage')).map(m => m[1]);
    if (away.length && drawn.length && Math.min(...away) > Math.max(...drawn) + 20) apart++;
  }
  const mixed = Object.values(colours).filter(c => c.size > 1).length;
  document.body.setAttribute('data-colours', Object.keys(colours).length + '/' + mixed);
  document.body.setAttribute('data-strips', svgs.length + '/' + apart);
  document.body.setAttribute('data-worst',
      document.querySelector('p.worst') ? document.querySelector('p.worst').textContent : '');
  document.body.setAttribute('data-stops', [...document.querySelectorAll('ul.stops li')]
      .map(li => li.textContent).join(' || '));
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
    worst = attribute(dom, "data-worst")
    assert "records of" in worst and "multilateration" in worst and "n_landmarks=10" in worst
    assert "Gram" not in worst  # the records leak comes before the Gram matrix's
    stops = attribute(dom, "data-stops").split(" || ")
    (multilateration,) = [s for s in stops if "stops multilateration as server" in s]
    assert "choosing fedcg-secure over fedcg-naive (it cannot run:" in multilateration
    assert "accuracy change +0.00 against fedcg-naive; it lets gram-inference in" in \
        multilateration
    (gram,) = [s for s in stops if "gram-inference as server" in s]
    assert "It targets another protocol: it does not apply for fedcg-naive" in gram
    assert "where multilateration applies instead" in gram
    named, mixed = (int(x) for x in attribute(dom, "data-colours").split("/"))
    assert named == 8 and mixed == 0  # each configuration one colour in both frontiers
    svgs, apart = (int(x) for x in attribute(dom, "data-strips").split("/"))
    assert apart == svgs  # not-applicable points right of every measured one, never at 0


def test_no_point_that_was_not_measured_is_in_a_pareto_set(report_dir: Path) -> None:
    report = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    for attack in ("multilateration", "gram-inference"):
        points, best, _ = frontier_points(report["configurations"], attack, "server")
        hidden = {(p.advantage, p.utility) for p in points if p.state != "measured"}
        assert best and not hidden & set(best)
        assert any(p.state == "not applicable" for p in points)  # one protocol: drawn apart


def test_no_legend_covers_a_data_point(report_dir: Path) -> None:
    report = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    for attack in ("multilateration", "gram-inference"):
        drawn = frontier_figure(report["configurations"], attack, "server")
        assert drawn is not None
        fig = drawn[0]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        legend = fig.axes[0].get_legend().get_window_extent(renderer)
        for ax in fig.axes:  # the advantage axis and the strip beside it
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
