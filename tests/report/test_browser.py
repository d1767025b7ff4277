"""The report and the viewer in headless Chromium: no console errors, plots with marks,
episode → trace, citation → page text, sub-call → its prompt and answer. Screenshots go to
``test-artifacts/report/`` (gitignored)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from support.browser import Browser, find_chromium

from dealroom.report import build_report, write_trace
from dealroom.report._plots import PLOTS
from dealroom.room import Room

pytestmark = pytest.mark.skipif(find_chromium() is None,
                                reason="no Chromium found (install Debian's `chromium`)")
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts" / "report"


@pytest.fixture(scope="module")
def browser():
    with Browser(timeout=30) as b:
        yield b


def marks(browser) -> dict[str, int]:
    return browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('figure.plot')).map(f => "
        "[f.id, f.querySelectorAll('[id^=data-] path, [id^=data-] use').length]))")


def test_the_report_draws_every_plot_and_an_episode_opens_its_trace(browser, copied_sweep,
                                                                    tmp_path):
    index = build_report([copied_sweep], tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    browser.errors.clear()
    browser.open(index.as_uri())
    browser.screenshot(ARTIFACTS / "report.png", full_page=True)
    drawn = marks(browser)
    expected = {f"plot-{k}" for k, (key, _, _) in PLOTS.items()
                if "note" not in report["plots"][key]}
    assert set(drawn) == expected and len(expected) >= 6
    assert all(n > 0 for n in drawn.values()), drawn
    assert browser.evaluate("document.querySelectorAll('table.headline tbody tr').length") == 2
    browser.click("table.headline th:nth-child(7)")  # sort by pass rate, twice
    browser.click("table.headline th:nth-child(7)")
    first = browser.evaluate("document.querySelector('table.headline tbody td').textContent")
    best = max(report["headline"], key=lambda r: r["pass_rate"])["policy"]
    assert first.startswith(best)
    browser.click("a.trace")
    browser.wait_for("document.querySelectorAll('section.turn').length > 2")
    assert browser.evaluate("location.pathname").endswith("/traces/e0000/index.html")
    browser.screenshot(ARTIFACTS / "report-trace.png")
    assert browser.errors == []


def test_the_viewer_nests_children_and_links_citations_and_sub_calls(browser, child_run,
                                                                     tmp_path):
    index = write_trace(child_run, tmp_path / "view")
    browser.errors.clear()
    browser.open(index.as_uri())
    browser.wait_for("document.querySelector('.budget') !== null")
    assert browser.evaluate(
        "document.querySelector('details.child section.turn h3').textContent") == \
        "root/c1-0 · turn 1"
    assert browser.evaluate("!!document.querySelector('section.turn details.child')")
    waves = browser.evaluate("Array.from(document.querySelectorAll('details.wave'))"
                             ".map(w => w.firstElementChild.textContent)")
    assert waves == ["wave 1 · 1 calls (1 ok, 0 failed) · 0.25 s · 150 tokens"]
    order = browser.evaluate("Array.from(document.querySelector('section.turn').children)"
                             ".map(e => e.className || e.tagName)")
    assert order[:4] == ["H3", "reply", "cell", "wave"]  # the code before the waves it sent
    assert "output cut" in browser.evaluate("document.querySelector('#timeline').textContent")
    assert browser.evaluate("document.querySelector('.budget').textContent").startswith(
        "turn 1 · ")  # the child's line: no T of its own
    browser.click("a.open-call")
    browser.wait_for("document.querySelector('#panel .answer') !== null")
    panel = browser.evaluate("document.querySelector('#panel').textContent")
    assert "List the issues." in panel and "ISSUE: change of control" in panel
    browser.click("nav button[data-tab=memo]")
    browser.wait_for("document.querySelector('#memo a.ref') !== null")
    browser.click("#memo a.ref")
    text = browser.wait_for("document.querySelector('#panel .page-text')?.textContent")
    with Room.open(json.loads((child_run / "config.json").read_text())["room"]) as room:
        assert text == room.text("D00002", 2)
    assert browser.evaluate("document.querySelector('#panel .doc-title').textContent") == \
        "D00002 p.2 of " + str(room.doc("D00002").pages)
    browser.screenshot(ARTIFACTS / "viewer-citation.png")
    browser.click("nav button[data-tab=scores]")
    scores = browser.evaluate("document.querySelector('#scores').textContent")
    assert "stated together at line 3" in scores and "judge errors (1)" in scores
    browser.click("nav button[data-tab=coverage]")
    browser.click("nav button[data-tab=usage]")
    usage = browser.evaluate("Array.from(document.querySelectorAll('#usage tr'))"
                             ".map(r => r.cells[0].textContent)")
    assert usage == ["part (the root, each sub-agent model it called, its children)",
                     "children", "root", "sub.default", "role", "child_root", "root", "sub",
                     "sub-agent model", "default", "scripted", "model", "oracle", "scripted",
                     "depth", "0", "1"]  # the children's tree is the timeline's
    assert "each one's totals (its own children included) are in its box on the timeline" \
        in browser.evaluate("document.querySelector('#usage p.children').textContent")
    tree = browser.evaluate("document.querySelectorAll('#coverage li').length")
    assert tree == len(room.docs)
    assert browser.errors == []


def test_a_long_timeline_loads_as_it_scrolls(browser, scripted_run, tmp_path, monkeypatch):
    from dealroom.report import _view

    monkeypatch.setattr(_view, "ITEMS_PER_PAGE", 3)
    index = write_trace(scripted_run, tmp_path / "view")
    pages = len(list((index.parent / "data").glob("items-*.js")))
    browser.errors.clear()
    browser.open(index.as_uri())
    browser.wait_for("Object.keys(DR.data).some(k => k.startsWith('items:'))")
    browser.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    browser.click("#load-all")
    browser.wait_for(f"Object.keys(DR.data).filter(k => k.startsWith('items:')).length == {pages}")
    assert browser.wait_for("document.querySelector('#more').hidden")
    browser.screenshot(ARTIFACTS / "viewer-scripted.png", full_page=True)
    assert browser.errors == []


def _width(browser, width: int) -> None:
    browser.send("Emulation.setDeviceMetricsOverride", session=browser.session, width=width,
                 height=900, deviceScaleFactor=1, mobile=False)


def _shoot_figures(browser, folder: Path) -> dict[str, dict[str, float]]:
    """A PNG of each figure and section (its box on the page) into ``folder``; the boxes."""
    boxes = browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('figure.plot, section[id]'))"
        ".map(f => {"
        "const r = f.getBoundingClientRect(); return [f.id, {x: r.left + scrollX, "
        "y: r.top + scrollY, width: r.width, height: r.height}]}))")
    for name, box in boxes.items():
        data = browser.send("Page.captureScreenshot", session=browser.session, format="png",
                            captureBeyondViewport=True, clip={**box, "scale": 1})["data"]
        (folder / f"{name}.png").write_bytes(base64.b64decode(data))
    return boxes


@pytest.mark.parametrize("width", [1400, 800])
def test_every_plot_of_a_mixed_report_reads_at_two_widths(browser, mixed_sources, roots_sweep,
                                                          tmp_path, width):
    """Sweeps in both settings, one of two roots at two depths, and a recovery folder: every
    plot drawn, inside the page at 1400 and 800 px, stating n, tau and the setting; a scatter
    point opens its trace."""
    index = build_report([*mixed_sources, roots_sweep], tmp_path / "rep",
                         title="Visible, hidden, recovered")
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    folder = ARTIFACTS / f"mixed-{width}"
    folder.mkdir(parents=True, exist_ok=True)
    browser.errors.clear()
    _width(browser, width)
    try:
        browser.open(index.as_uri())
        browser.screenshot(folder / "report.png", full_page=True)
        drawn = marks(browser)
        expected = {f"plot-{k}" for k, (key, _, _) in PLOTS.items()
                    if "note" not in report["plots"][key]}
        assert set(drawn) == expected == {f"plot-{k}" for k in PLOTS}, drawn
        assert all(n > 0 for n in drawn.values()), drawn
        boxes = _shoot_figures(browser, folder)
        assert all(b["x"] >= 0 and b["x"] + b["width"] <= width for b in boxes.values()), boxes
        texts = browser.evaluate("Object.fromEntries(Array.from(document.querySelectorAll("
                                 "'figure.plot')).map(f => [f.id, f.querySelector('svg')"
                                 ".textContent]))")
        for name, text in texts.items():
            assert "n = " in text and "setting " in text, name
            assert "tau not used" not in text and "n/a pts" not in text, name
        assert "setting truncation, visible" in texts["plot-passk_curves"]
        assert "tau 0.5" in texts["plot-passk_curves"]
        table, smallest = _table_width_and_smallest_text(browser)
        if width == 1400:  # at 800 px the plots shrink with the page
            assert table[0] <= table[1], f"the policy table scrolls sideways: {table}"
            assert smallest >= 11, f"plot text {smallest:.1f} px high at {width} px"
        truncated = {r["max_turns"] for r in report["headline"] if r["setting"] == "truncation"}
        budgets = {c["max_turns"] for c in report["passk"] if c["setting"] == "truncation"}
        assert truncated == budgets and len(budgets) > 1, "a row per T of a truncation sweep"
        ticks = browser.evaluate("Array.from(document.querySelectorAll('#plot-pass_coverage "
                                 "g[id^=xtick] text')).map(t => t.textContent)")
        assert len(ticks) >= 3 and all(t.endswith("%") for t in ticks), ticks
        links = browser.evaluate("Array.from(document.querySelectorAll('#plot-pass_coverage "
                                 "a')).map(a => a.getAttribute('href'))")
        traces = {e["trace"] for e in report["episodes"] if e["kind"] == "episode"}
        assert links and set(links) <= traces
        point = browser.evaluate(
            "(() => { const a = document.querySelector('#plot-pass_coverage a');"
            "a.scrollIntoView({block: 'center'});"
            "const r = a.getBoundingClientRect();"
            "return [a.getAttribute('href'), r.left + r.width / 2, r.top + r.height / 2]})()")
        for kind in ("mousePressed", "mouseReleased"):
            browser.send("Input.dispatchMouseEvent", session=browser.session, type=kind,
                         x=point[1], y=point[2], button="left", clickCount=1)
        browser.wait_for(f"location.pathname.endsWith({json.dumps('/' + point[0])})")
        assert browser.errors == []
    finally:
        browser.send("Emulation.clearDeviceMetricsOverride", session=browser.session)


DOCS_IMAGES = Path(__file__).parents[2] / "docs" / "images"


@pytest.mark.parametrize("width", [1400, 800])
def test_the_docs_screenshots_come_from_a_clean_example(browser, sweep_builder, generated_room,
                                                        small_generated_room, recovery_folder,
                                                        tmp_path, monkeypatch, width):
    """At 1400 and 800 px: no temporary path or simulator in the page, the table fits at
    1400 px, plot text at 11 px or more. ``DEALROOM_DOCS_IMAGES=1`` writes docs/images."""
    import os


    def _metrics(coverage: float, cost: float, sub_calls: int) -> dict:
        return {"usage": {"total": {"input_tokens": 9000, "output_tokens": 900,
                                    "cost_usd": cost},
                          "by_role": {"root": {"input_tokens": 1200, "output_tokens": 400}}},
                "behaviour": {"sub_calls": sub_calls, "turns": 6},
                "coverage": {"coverage": coverage}, "wall_s": 40.0}

    rooms = {"g12": small_generated_room, "g20": generated_room}
    visible = sweep_builder("sweeps/visible", max_turns=[8, 16], samples=3)
    hidden = sweep_builder("sweeps/hidden", max_turns=[8, 16], samples=3, budget_visible=False)
    for name, room in rooms.items():
        docs = 12 if name == "g12" else 20
        for root, base in (("qwen3-32b", 0.45), ("llama-3.3-70b", 0.3)):
            for depth in ((1, 2) if root == "qwen3-32b" else (1,)):
                for seed in range(3):
                    for turns in (8, 16):
                        rate = min(1.0, base + (0.2 if turns == 16 else 0) + 0.08 * seed
                                   - 0.1 * (depth - 1) + (0.05 if docs == 20 else 0))
                        visible.episode(name, root, sub="qwen3-8b", depth=depth,
                                        max_turns=turns, seed=seed, pass_rate=rate,
                                        room_path=str(room),
                                        by_type={"fact": rate, "citation": 0.5 * rate,
                                                 "risk": 0.0 if root.startswith("llama") else
                                                 rate / 2},
                                        by_turn=[rate / 2, rate],
                                        metrics=_metrics(0.02 * turns * (seed + 1) * rate,
                                                         0.05 + 0.2 * rate, docs // 2 + seed))
            for seed in range(3):
                by_turn = [min(1.0, 0.035 * t + 0.06 * seed + base / 3) for t in range(1, 17)]
                hidden.episode(name, root, sub="qwen3-8b", max_turns=16, seed=seed,
                               pass_rate=by_turn[-1], room_path=str(room), by_turn=by_turn,
                               metrics=_metrics(0.1 + 0.1 * seed, 0.2, docs // 2))
    visible.write(), hidden.write()
    import shutil

    spec = json.loads((recovery_folder / "recover.json").read_text())
    shutil.copytree(spec["pool"], tmp_path / "pool")
    shutil.copytree(recovery_folder, tmp_path / "recovery")
    (tmp_path / "recovery" / "recover.json").write_text(json.dumps({**spec, "pool": "pool"}))
    monkeypatch.chdir(tmp_path)
    index = build_report(["sweeps/visible", "sweeps/hidden", "recovery"], Path("report"),
                         title="Two roots, visible and hidden turn budgets, a recovery")
    folder = ARTIFACTS / f"docs-{width}"
    browser.errors.clear()
    _width(browser, width)
    try:
        browser.open(index.resolve().as_uri())
        page = browser.evaluate("document.body.innerText")
        assert "pytest" not in page and str(tmp_path) not in page and " *" not in page
        svg = browser.evaluate("Array.from(document.querySelectorAll('figure.plot svg'))"
                               ".map(s => s.textContent).join(' ')")
        assert "n/a" not in svg and "not used" not in svg
        table, smallest = _table_width_and_smallest_text(browser)
        if width == 1400:
            assert table[0] <= table[1], table
            assert smallest >= 11, smallest
        browser.screenshot(folder / "report.png")
        _shoot_figures(browser, folder)
        if os.environ.get("DEALROOM_DOCS_IMAGES") == "1":
            if width == 1400:
                for name, shot in (("report.png", "report.png"),
                                   ("report-passk.png", "plot-passk_curves.png"),
                                   ("report-coverage.png", "plot-pass_coverage.png"),
                                   ("report-by-type.png", "plot-by_type.png"),
                                   ("report-recovery.png", "recovery.png")):
                    (DOCS_IMAGES / name).write_bytes((folder / shot).read_bytes())
            else:
                (DOCS_IMAGES / "report-800.png").write_bytes((folder / "report.png").read_bytes())
        assert browser.errors == []
    finally:
        browser.send("Emulation.clearDeviceMetricsOverride", session=browser.session)


def _table_width_and_smallest_text(browser) -> tuple[list[float], float]:
    """The policy table's box ([scroll width, client width]) and the smallest plot text as
    drawn, in CSS pixels."""
    table = browser.evaluate("(() => { const d = document.querySelector("
                             "'table.headline').parentElement;"
                             "return [d.scrollWidth, d.clientWidth] })()")
    smallest = browser.evaluate(
        "Math.min(...Array.from(document.querySelectorAll('figure.plot svg')).flatMap(s =>"
        "{ const k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;"
        "return Array.from(s.querySelectorAll('text')).map(t =>"
        "parseFloat(getComputedStyle(t).fontSize) * k) }))")
    return table, smallest
