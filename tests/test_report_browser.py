"""The HTML report in a real browser (headless Chromium, installed by ``.ci/run``): it lays
out within a 600-pixel-wide window (no element wider than the page, no horizontal scroll)
and at 1280 pixels."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.models import DistinctLDiversity
from gpuppdp.report import write_report

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="needs headless Chromium "
                                "(Debian: apt-get install chromium; .ci/run installs it)")

# after layout: the right edge of the widest element, the page's width and its scroll width
_PROBE = ("<script>var w=0,who='';document.querySelectorAll('body *').forEach(function(e){"
          "var r=e.getBoundingClientRect().right;if(r>w){w=r;who=e.tagName+' '+e.className}});"
          "var p=document.createElement('pre');p.id='probe';p.textContent=Math.round(w)+'|'+"
          "document.documentElement.clientWidth+'|'+document.documentElement.scrollWidth+'|'+"
          "who;document.body.appendChild(p)</script>")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    data, hierarchies = datasets.adult()
    qis = {c: hierarchies[c] for c in ("sex", "age", "race", "marital-status", "education",
                                       "native-country", "workclass")}
    result = Anonymizer(quasi_identifiers=qis, sensitive=["occupation"],
                        identifying=["salary-class"], k=5, suppression_limit=0.05,
                        models=[DistinctLDiversity("occupation", 3)], backend="cpu",
                        seed=0).fit(data)
    folder = tmp_path_factory.mktemp("browser")
    page, _ = write_report(result, data, folder / "report.html")
    return page.read_text(encoding="utf-8"), folder


def _layout(html: str, folder, width: int) -> tuple[int, int, int, str]:
    """``(right edge of the widest element, page width, scroll width, that element)``."""
    probe = folder / f"probe_{width}.html"
    probe.write_text(html.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu",
                          f"--window-size={width},900", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="probe">(\d+)\|(\d+)\|(\d+)\|([^<]*)</pre>', dom)
    assert found, dom[-500:]
    right, client, scroll, widest = found.groups()
    return int(right), int(client), int(scroll), widest


def test_the_probe_sees_an_overflow(report):
    html, folder = report
    wide = html.replace("</body>", '<div style="width:2000px">x</div></body>')
    right, client, scroll, _ = _layout(wide, folder, 600)
    assert right >= 2000 > client and scroll > client


@pytest.mark.parametrize("width", [600, 1280])
def test_report_fits_the_window(report, width):
    html, folder = report
    assert "<script" not in html.lower()  # the report itself runs nothing
    right, client, scroll, widest = _layout(html, folder, width)
    assert int(scroll) <= int(client), f"horizontal scroll at {width} px"
    assert int(right) <= int(client), f"{widest} reaches {right} px of {client}"
    assert int(client) > width - 40  # the page is as wide as the window, minus a scrollbar
