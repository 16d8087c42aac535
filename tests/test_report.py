"""acesim.report: one self-contained HTML file, checked as text (what it
holds, what it may not load, what it escapes) and opened in headless
Chromium (no console errors, every figure decoded, a screenshot)."""

from __future__ import annotations

import base64
import builtins
import importlib.util
import io
import shutil
import struct
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import plot, report

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None,
    reason='the report draws its figures with matplotlib (pip install "acesim[plot]")',
)


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _browser()
CHROMEDRIVER = shutil.which("chromedriver")
HAS_SELENIUM = importlib.util.find_spec("selenium") is not None
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not found (apt-get install chromium)"
)
needs_selenium = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None or not HAS_SELENIUM,
    reason="needs Chromium, chromedriver and selenium "
    "(apt-get install chromium chromium-driver; pip install selenium)",
)


# ------------------------------------------------------------------ inputs


POLICY = ace.Policy(quarantine=ace.Quarantine(2, ace.DAY, 4 * ace.HOUR))


@pytest.fixture(scope="module")
def fleet_results() -> dict[str, ace.SimulationResult]:
    """Two policies on the same node failures, with the event log."""
    fleet = ace.Fleet(
        6,
        repair=ace.Constant(2 * ace.HOUR),
        node_failures=ace.NodeTrace.from_times(
            {0: [4 * ace.HOUR, 10 * ace.HOUR], 3: [6 * ace.HOUR]}, nodes=6
        ),
        maintenance=[(20 * ace.HOUR, ace.HOUR, [5])],
    )
    jobs = [ace.Job(32, work=ace.DAY, checkpoint_interval=ace.HOUR, priority=1, name="flagship")]
    jobs += [
        ace.Job(8, work=4 * ace.HOUR, checkpoint_interval=ace.HOUR, submit=ace.HOUR, name="small")
    ]
    return {
        "spares+quarantine": ace.simulate(
            jobs, fleet=fleet, policy=POLICY, replicas=3, seed=2, record_events=True
        ),
        "wait-repair": ace.simulate(
            jobs,
            fleet=fleet,
            policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
            replicas=3,
            seed=2,
            record_events=True,
        ),
    }


@pytest.fixture(scope="module")
def best() -> ace.OptimalInterval:
    job = ace.Job(128, work=ace.DAY, checkpoint_interval=ace.HOUR)
    return ace.optimal_interval(job, ace.Exponential(8 * ace.HOUR), replicas=20, seed=1)


@pytest.fixture(scope="module")
def full_report(
    tmp_path_factory: pytest.TempPathFactory,
    fleet_results: dict[str, ace.SimulationResult],
    best: ace.OptimalInterval,
) -> Path:
    path = tmp_path_factory.mktemp("report") / "fleet report.html"
    out = report.write_report(
        fleet_results,
        path,
        title="Quarantine vs wait-repair",
        optimal=best,
        chosen=ace.HOUR,
    )
    assert out == path
    return path


class Page(HTMLParser):
    """Every tag with its attributes, the text, and the images."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str) -> Iterator[dict[str, str | None]]:
        return (attrs for t, attrs in self.tags if t == tag)

    @property
    def plain(self) -> str:
        return " ".join(self.text)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


# ---------------------------------------------------------------- as text


def test_report_is_self_contained(full_report: Path) -> None:
    text = full_report.read_text(encoding="utf-8")
    page = Page(text)
    tags = {t for t, _ in page.tags}
    assert "script" not in tags and "iframe" not in tags and "object" not in tags
    assert "<script" not in text.lower()
    for tag, attrs in page.tags:
        for name in ("src", "href", "srcset", "action", "data", "poster"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("data:", "#")), f"<{tag} {name}={value[:60]!r}>"
        assert not any(name.startswith("on") for name in attrs), f"event handler on <{tag}>"
    # loading anything else is forbidden by the page itself
    csp = [a for a in page.all("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in str(csp[0]["content"])
    assert "url(" not in text and "@import" not in text


def test_report_figures_are_embedded_pngs(full_report: Path) -> None:
    page = Page(full_report.read_text(encoding="utf-8"))
    images = list(page.all("img"))
    # breakdown, per-replica ETTR, comparison, interval curve, two timelines
    assert len(images) == 6
    for attrs in images:
        src = str(attrs["src"])
        assert src.startswith("data:image/png;base64,")
        data = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert png_size(data) == (int(str(attrs["width"])), int(str(attrs["height"])))
        assert len(data) > 5000
        assert attrs.get("alt")


def test_report_sections_and_tables(
    full_report: Path, fleet_results: dict[str, ace.SimulationResult]
) -> None:
    page = Page(full_report.read_text(encoding="utf-8"))
    ids = [str(a.get("id")) for _, a in page.tags if a.get("id")]
    for section in ("summary", "provenance", "breakdown", "replicas", "comparison", "interval"):
        assert section in ids
    assert "timeline" in ids and "jobs" in ids
    plain = page.plain
    assert "Quarantine vs wait-repair" in plain
    for name, res in fleet_results.items():
        value, low, high = res.ettr()
        assert f"{value:.4f} [{low:.4f}, {high:.4f}]" in plain  # the summary row
        assert name in plain
    # the comparison table holds acesim.compare's paired difference
    d = ace.compare(fleet_results["spares+quarantine"], fleet_results["wait-repair"])["ettr"]
    assert f"{d.diff:+.4f} [{d.low:+.4f}, {d.high:+.4f}]" in plain
    # the result's provenance: its seed and replicas, and its arguments
    assert "acesim_version" in plain and "arguments (JSON data" in plain
    # the timelines read the quarantines from the node events: no warning
    assert "Warning" not in plain
    assert "quarantine(s)" in plain
    # jobs by their names in the jobs tables and the timelines' lanes, with
    # a breakdown per job; the provenance last, collapsed
    assert "flagship (job 0)" in plain and "small (job 1)" in plain
    assert "Job lanes, top to bottom: flagship (job 0) (32 GPUs), small (job 1) (8 GPUs)." in plain
    assert "productive share" in plain
    assert ids.index("provenance") > ids.index("jobs") > ids.index("breakdown")
    assert "No interval curve" not in plain and "No fleet timeline" not in plain


def test_report_of_one_result_has_only_what_applies(tmp_path: Path) -> None:
    job = ace.Job(8, work=ace.DAY, checkpoint_interval=ace.HOUR)
    res = ace.simulate(job, ace.Exponential(12 * ace.HOUR), replicas=1, seed=1)
    path = report.write_report(res, tmp_path / "one.html")
    page = Page(path.read_text(encoding="utf-8"))
    ids = {a.get("id") for _, a in page.tags if a.get("id")}
    assert {"summary", "provenance", "breakdown"} <= ids
    # one replica: no distribution; one result: no comparison; no fleet: no
    # timeline; no search: no interval curve; each says so where it would be
    assert "jobs" not in ids
    assert len(list(page.all("img"))) == 1
    assert "(one replica)" in page.plain
    for sentence in (
        "No per-replica distribution: every result has a single replica.",
        "No comparison: it sets several results side by side",
        "No interval curve: it comes from a search over checkpoint intervals",
        "No fleet timeline: it is drawn from the event log of a run on a fleet "
        "(record_events=True, acesim run --record-events) where nodes leave service, "
        "which this result does not hold.",
    ):
        assert sentence in page.plain


def test_report_escapes_every_text(tmp_path: Path) -> None:
    job = ace.Job(8, work=6 * ace.HOUR, checkpoint_interval=ace.HOUR)
    res = ace.simulate(job, ace.Exponential(12 * ace.HOUR), replicas=2, seed=3)
    res = res.with_provenance(
        scenario={"run": {"name": 'a <b>"bold"</b> & <script>alert(1)</script>'}}
    )
    evil = "<img src=x onerror=alert(2)>"
    path = report.write_report({evil: res, "plain": res}, tmp_path / "x.html", title="<i>t</i>")
    text = path.read_text(encoding="utf-8")
    assert "<script" not in text and "<img src=x" not in text and "<i>t</i>" not in text
    assert "&lt;img src=x onerror=alert(2)&gt;" in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    page = Page(text)
    assert all(str(a["src"]).startswith("data:image/png") for a in page.all("img"))
    assert evil in page.plain and "<i>t</i>" in page.plain  # shown as text
    # the provenance is shown: its version and the scenario
    assert "acesim_version" in page.plain and '"name": "a <b>' in page.plain


def test_report_quarantine_argument_is_deprecated_and_ignored(
    tmp_path: Path, fleet_results: dict[str, ace.SimulationResult]
) -> None:
    wrong = ace.Quarantine(9, ace.DAY, ace.HOUR)
    res = fleet_results["spares+quarantine"]
    with pytest.warns(DeprecationWarning, match="quarantine= is no longer used"):
        path = report.write_report(res, tmp_path / "w.html", quarantine=wrong)
    with pytest.warns(DeprecationWarning, match="quarantine= is no longer used"):
        report.report_html(res, quarantine=wrong)
    plain = Page(path.read_text(encoding="utf-8")).plain
    assert "Warning" not in plain
    assert plain == Page(report.report_html(res)).plain


def test_report_arguments(tmp_path: Path, fleet_results: dict[str, ace.SimulationResult]) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        report.write_report({}, tmp_path / "e.html")
    with pytest.raises(TypeError, match="SimulationResult"):
        report.write_report({"a": 1}, tmp_path / "e.html")  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="dpi"):
        report.write_report(fleet_results, tmp_path / "e.html", dpi=5)
    with pytest.raises(TypeError, match="optimal"):
        report.write_report(fleet_results, tmp_path / "e.html", optimal=0.5)  # type: ignore[arg-type]
    assert not (tmp_path / "e.html").exists()


def test_report_without_matplotlib(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fleet_results: dict[str, ace.SimulationResult]
) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "matplotlib":
            raise ImportError(f"No module named {name!r} (hidden by the test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r'pip install "acesim\[plot\]"'):
        report.write_report(fleet_results, tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


# ------------------------------------------------------------- in Chromium


def decoded_png(data: bytes) -> Any:
    from matplotlib.image import imread

    return imread(io.BytesIO(data), format="png")


def not_blank(pixels: Any) -> None:
    rgb = pixels[..., :3]
    assert np.any(rgb < 0.9, axis=-1).mean() > 0.02
    assert len(np.unique((rgb * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50


def chrome(width: int = 1280, height: int = 1000) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)


IMAGES = """return Array.from(document.images).map(
    i => [i.complete, i.naturalWidth, i.naturalHeight, i.width])"""


def open_page(driver: Any, path: Path) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """Load the page; its console messages and its images' states."""
    driver.get(path.resolve().as_uri())
    driver.execute_script("return document.readyState")
    return driver.get_log("browser"), driver.execute_script(IMAGES)


@needs_selenium
def test_report_in_headless_chromium(full_report: Path, tmp_path: Path) -> None:
    page = Page(full_report.read_text(encoding="utf-8"))
    sizes = [(int(str(a["width"])), int(str(a["height"]))) for a in page.all("img")]
    driver = chrome()
    try:
        log, images = open_page(driver, full_report)
        errors = [entry for entry in log if entry.get("level") in ("SEVERE", "ERROR")]
        assert errors == [], errors
        # every figure is there and decoded at its own size
        assert len(images) == len(sizes) == 6
        for (complete, natural_w, natural_h, _), (w, h) in zip(images, sizes, strict=True):
            assert complete and natural_w > 0
            assert (natural_w, natural_h) == (w, h)
        assert driver.title == "Quarantine vs wait-repair"
        # the jobs by name, as a reader sees them: the jobs table's rows and
        # the timeline's lanes
        cells = [c.text for c in driver.find_elements("css selector", "#jobs ~ div td")]
        assert "flagship (job 0)" in cells and "small (job 1)" in cells
        captions = [c.text for c in driver.find_elements("tag name", "figcaption")]
        lanes = "Job lanes, top to bottom: flagship (job 0) (32 GPUs), small (job 1) (8 GPUs)."
        assert sum(lanes in c for c in captions) == 2  # one timeline per result
        height = driver.execute_script("return document.documentElement.scrollHeight")
        assert height > 3000  # the figures take their room
        driver.set_window_size(1280, min(int(height), 16000))
        shot = driver.get_screenshot_as_png()
    finally:
        driver.quit()
    (tmp_path / "report.png").write_bytes(shot)
    pixels = decoded_png(shot)
    assert pixels.shape[1] == 1280 and pixels.shape[0] > 3000
    not_blank(pixels)


@needs_selenium
def test_absent_figures_say_why_in_headless_chromium(tmp_path: Path) -> None:
    job = ace.Job(8, work=ace.DAY, checkpoint_interval=ace.HOUR, name="solo")
    res = ace.simulate(job, ace.Exponential(12 * ace.HOUR), replicas=1, seed=1)
    path = report.write_report(res, tmp_path / "one.html")
    driver = chrome()
    try:
        log, images = open_page(driver, path)
        assert [e for e in log if e.get("level") in ("SEVERE", "ERROR")] == []
        assert len(images) == 1
        shown = [p.text for p in driver.find_elements("css selector", "p.absent")]
        assert all(p.is_displayed() for p in driver.find_elements("css selector", "p.absent"))
    finally:
        driver.quit()
    assert "No per-replica distribution: every result has a single replica." in shown
    assert any(
        text.startswith("No fleet timeline: it is drawn from the event log") for text in shown
    )
    assert any(text.startswith("No interval curve:") for text in shown)


@needs_selenium
def test_the_console_check_sees_errors(tmp_path: Path) -> None:
    # The control: a page with a missing image logs an error and shows a
    # broken image, so the checks above are not vacuous.
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><img src="missing.png"></body></html>')
    driver = chrome()
    try:
        log, images = open_page(driver, bad)
    finally:
        driver.quit()
    assert any(entry.get("level") == "SEVERE" for entry in log)
    assert images[0][1] == 0


@needs_chromium
def test_report_screenshot_by_the_chromium_command(full_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    result = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,4000",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            full_report.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    pixels = decoded_png(shot.read_bytes())
    assert pixels.shape[:2] == (4000, 1280)
    not_blank(pixels)


def test_plot_and_report_share_the_captions(
    full_report: Path, fleet_results: dict[str, ace.SimulationResult]
) -> None:
    captions = [
        " ".join(t.split())
        for t in Page(full_report.read_text(encoding="utf-8")).text
        if t.startswith("Figure ")
    ]
    expected = plot.ettr_breakdown_data(fleet_results).caption
    assert any(expected in c for c in captions)


def test_module_example() -> None:
    import doctest

    failed, tried = doctest.testmod(report, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0


def test_the_interval_curve_of_a_sweep_grid(tmp_path: Path) -> None:
    """A grid table as acesim sweep --out writes it: points in the axis's
    order, drawn in the order of the intervals they resolved to."""
    grid = np.zeros(
        3,
        [
            ("point", np.int64),
            ("jobs[0].checkpoint_interval", "U8"),
            ("jobs[0].checkpoint_interval.resolved_s", np.float64),
            ("best", bool),
            ("plausible", bool),
            ("ettr", np.float64),
            ("ettr_low", np.float64),
            ("ettr_high", np.float64),
        ],
    )
    grid["point"] = [0, 1, 2]
    grid["jobs[0].checkpoint_interval"] = ["2h", "30min", "daly"]
    grid["jobs[0].checkpoint_interval.resolved_s"] = [7200.0, 1800.0, 3000.0]
    grid["best"] = [False, False, True]
    grid["plausible"] = [False, True, True]
    grid["ettr"] = [0.90, 0.93, 0.94]
    grid["ettr_low"] = grid["ettr"] - 0.01
    grid["ettr_high"] = grid["ettr"] + 0.01
    data = plot.sweep_curve_data(grid)
    assert data.axis == "jobs[0].checkpoint_interval"
    assert data.intervals.tolist() == [1800.0, 3000.0, 7200.0]
    assert data.labels == ("30min", "daly", "2h")
    assert data.ettr.tolist() == [0.93, 0.94, 0.90]
    assert data.best == 1 and data.plausible.tolist() == [True, True, False]
    assert "the best point (daly, ETTR 0.9400)" in data.caption
    res = ace.simulate(ace.Job(8, ace.DAY, ace.HOUR), ace.Exponential(12 * ace.HOUR), replicas=2)
    page = Page(report.report_html(res, sweep=grid))
    assert "the best point (daly, ETTR 0.9400)" in page.plain  # the figure's caption
    assert "No interval curve" not in page.plain
    with pytest.raises(ValueError, match="no checkpoint-interval axis"):
        plot.sweep_curve_data(grid[["point", "ettr"]])
