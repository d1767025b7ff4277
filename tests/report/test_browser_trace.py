"""The trace viewer's reading aids in headless Chromium: a fork's banner, failure-point badges
and "nothing ran", the harness's message to the root, a citation opening the cited passage lit,
answer previews in the wave table, and the judge's line references into the memo. Screenshots
go to ``test-artifacts/report/`` (gitignored; docs/report.md shows copies)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.browser import Browser, find_chromium

from dealroom.report import write_trace
from dealroom.room import Room
from dealroom.runs import memo_delta

pytestmark = pytest.mark.skipif(find_chromium() is None,
                                reason="no Chromium found (install Debian's `chromium`)")
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts" / "report"
USAGE = {"input_tokens": 120, "cached_input_tokens": 0, "output_tokens": 30, "cost_usd": 0.002,
         "calls": 1}
ANSWER = ("ISSUE: Acme may terminate the agreement on a change of control of the company | "
          "SEVERITY: high | AMOUNT: none | DOC: D00002 | PAGE: 2")


@pytest.fixture(scope="module")
def browser():
    with Browser(timeout=30) as b:
        yield b


def _event(seq: int, kind: str, **fields) -> dict:
    return {"seq": seq, "t": seq / 10, "type": kind, "agent": "root", "depth": 0, **fields}


def _reply(seq: int, turn: int, seen: str, output: str) -> dict:
    return _event(seq, "model_call", role="root", model="m", call_id=f"root/t{turn}", turn=turn,
                  wave=None, input={"messages": [{"role": "user", "content": seen}]},
                  output=output, usage=USAGE, error=None, latency_s=0.5, provider={},
                  tokens=None)


def _sub(seq: int, n: int, output: str | None, error: str | None) -> dict:
    return _event(seq, "model_call", role="sub", model="oracle", call_id=f"root/t3/s{n}",
                  turn=3, wave=1, input={"prompt": "List the issues.", "text": None,
                                         "truncated": False,
                                         "docs": [{"id": "D00002", "pages": [1, 2]}]},
                  output=output, usage=USAGE, error=error, latency_s=0.2, provider={},
                  tokens=None)


def cited_sentence(room_path: str) -> str:
    """A sentence of D00002 p.2 with several words, as a memo would restate it."""
    with Room.open(room_path) as room:
        text = room.text("D00002", 2)
    sentences = [s.strip() for s in re.split(r"(?<=[.;])\s+|\n+", text)]
    return max(sentences, key=lambda s: len(set(re.findall(r"[a-z]{5,}", s.lower()))))


@pytest.fixture
def failing_fork(generated_room, tmp_path) -> Path:
    """A hand-written fork of another run: turn 1 without code, turn 2 a cell error, turn 3 a
    wave with a failed call and 1 of 4 turns left, turn 4 the memo; judged, with line refs."""
    run = tmp_path / "fork"
    (run / "output").mkdir(parents=True)
    config = {"version": 1, "harness": "rlm", "room": str(generated_room),
              "root": "scripted:waves=1", "sub": "oracle", "settings": {"max_turns": 4},
              "deliverables": {"memo": "memo.md"},
              "forked_from": {"run": str(tmp_path / "source-run"), "turn": 1, "events": 2,
                              "root": "scripted"}}
    (run / "config.json").write_text(json.dumps(config))
    events = [
        _event(0, "run_start", room="g20", docs=20, tokens=1000),
        _reply(1, 1, "Turn 1 of 4. The data room is the variable `room`.", "Let me think."),
        _reply(2, 2, "Turn 2 of 4. Your reply had no ```python block; nothing ran.",
               "```python\nprint(x)\n```"),
        _event(3, "cell", turn=2, code="print(x)", output="",
               error="Traceback (most recent call last):\nNameError: name 'x' is not defined",
               timed_out=False, crashed=False, seconds=0.01),
        _reply(4, 3, "Turn 3 of 4. NameError: name 'x' is not defined",
               "```python\nllm_batch(calls)\n```"),
        _sub(5, 0, ANSWER, None),
        _sub(6, 1, None, "HTTP 503 from the sub-agent"),
        _event(7, "wave", turn=3, wave=1, calls=2, ok=1, failed=1, seconds=0.3),
        _event(8, "cell", turn=3, code="llm_batch(calls)", output="1 failed", error=None,
               timed_out=False, crashed=False, seconds=0.3),
        _reply(9, 4, "Turn 4 of 4 (last turn). wave 1: 1 failed", "```python\nsubmit()\n```"),
        _event(10, "cell", turn=4, code="submit()", output="", error=None, timed_out=False,
               crashed=False, seconds=0.01),
        _event(11, "memo", turn=4, sections=2, chars=200),
        _event(12, "run_end", status="submitted", reason="the agent called submit()", turns=4,
               ended="submitted"),
    ]
    (run / "trajectory.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    memo = (f"# Memo\n\n## Key Findings\n\n- Acme change of control.\n"
            f"- {cited_sentence(str(generated_room))} [D00002 p.2]\n")
    (run / "output" / "memo.md").write_text(memo)
    (run / "memo_history.jsonl").write_text(json.dumps(
        {"turn": 4, "ops": memo_delta("", memo), "chars": len(memo)}) + "\n")
    scores = {"summary": "1/2 criteria passed", "pass_rate": 0.5, "all_pass": False,
              "judge": {"name": "reference"}, "pass_rate_by_type": {},
              "criteria_results": [
                  {"id": "C-001", "title": "the clause", "verdict": "pass",
                   "reasoning": "stated together at line 6: the clause"},
                  {"id": "C-002", "title": "the amount", "verdict": "fail",
                   "reasoning": "no finding states all of it; closest (line 5) lacks amount"}]}
    (run / "scores.json").write_text(json.dumps(scores))
    return run


def text_of(browser, selector: str) -> str:
    return browser.evaluate(f"document.querySelector({selector!r})?.textContent ?? null")


def test_the_viewer_shows_the_fork_failures_and_what_the_root_saw(browser, failing_fork,
                                                                  tmp_path):
    index = write_trace(failing_fork, tmp_path / "view")
    browser.errors.clear()
    browser.open(index.as_uri())
    browser.wait_for("document.querySelectorAll('section.turn').length >= 4")
    banner = text_of(browser, "#banner")
    assert "continues source-run after turn 1" in banner
    assert "before: scripted → after: scripted:waves=1" in banner
    badges = browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('section.turn')).map(s => "
        "[s.dataset.turn, Array.from(s.querySelectorAll('h3 .badge')).map(b => b.textContent)]))")
    assert badges == {"1": ["no code"], "2": ["cell error"], "3": ["failed wave", "low budget"],
                      "4": []}
    turn1 = text_of(browser, "section.turn[data-turn='1']")
    assert "nothing ran" in turn1
    assert text_of(browser, "section.turn[data-turn='2'] .nothing-ran") is None
    seen = text_of(browser, "section.turn[data-turn='3'] .seen summary")
    assert seen.startswith("harness → root: Turn 3 of 4. NameError")
    previews = browser.evaluate("Array.from(document.querySelectorAll('details.wave td.preview'))"
                                ".map(td => td.textContent)")
    assert previews[0].startswith("ISSUE: Acme may terminate") and previews[0].endswith("…")
    assert previews[1] == ""  # the failed call: no answer
    browser.evaluate("document.querySelectorAll('details.wave').forEach(d => d.open = true)")
    browser.screenshot(ARTIFACTS / "viewer-failures.png", full_page=True)
    assert browser.errors == []


def test_a_citation_opens_the_cited_passage_and_a_judge_line_opens_the_memo(
        browser, failing_fork, generated_room, tmp_path):
    index = write_trace(failing_fork, tmp_path / "view")
    browser.errors.clear()
    browser.open(index.as_uri())
    browser.click("nav button[data-tab=memo]")
    browser.wait_for("document.querySelector('#memo a.ref') !== null")
    browser.click("#memo a.ref")
    marked = browser.wait_for("document.querySelector('#panel mark.cited')?.textContent")
    assert marked.strip() == cited_sentence(str(generated_room))
    assert browser.evaluate("(() => { const r = document.querySelector('#panel mark.cited')"
                            ".getBoundingClientRect(); return r.top >= 0 && "
                            "r.bottom <= innerHeight; })()")
    browser.screenshot(ARTIFACTS / "viewer-cited-passage.png")
    browser.click("nav button[data-tab=scores]")
    links = browser.evaluate("Array.from(document.querySelectorAll('#scores a.line-ref'))"
                             ".map(a => a.dataset.line)")
    assert links == ["6", "5"]
    browser.click("#scores a.line-ref")
    lit = browser.wait_for("document.querySelector('#memo .ln.hl')?.textContent")
    memo_lines = (failing_fork / "output" / "memo.md").read_text().splitlines()
    assert lit == memo_lines[5] and not browser.evaluate("document.querySelector('#memo').hidden")
    assert browser.errors == []


@pytest.mark.parametrize("width", [1400, 800])
def test_the_memo_reads_as_markdown_and_tabs_and_turns_have_urls(browser, failing_fork,
                                                                tmp_path, width):
    """The memo was raw Markdown in a fixed-height box, the header repeated the spec string
    with its endpoint and prices, and no tab or turn had a URL. ``DEALROOM_DOCS_IMAGES=1``
    writes the viewer's screenshots in docs/images (at 1400 px)."""
    import os

    config = json.loads((failing_fork / "config.json").read_text())
    spec = "qwen3-32b@http://gpu:8000/v1,price_in=0.2,price_out=0.6"
    (failing_fork / "config.json").write_text(json.dumps(
        {**config, "root": spec, "sub": "qwen3-8b@http://gpu:8001/v1,price_in=0.05"}))
    try:
        index = write_trace(failing_fork, tmp_path / "view")
    finally:
        (failing_fork / "config.json").write_text(json.dumps(config))
    browser.errors.clear()
    browser.send("Emulation.setDeviceMetricsOverride", session=browser.session, width=width,
                 height=900, deviceScaleFactor=1, mobile=False)
    try:
        _memo_and_urls(browser, index, width, os.environ.get("DEALROOM_DOCS_IMAGES") == "1")
    finally:
        browser.send("Emulation.clearDeviceMetricsOverride", session=browser.session)


def _memo_and_urls(browser, index: Path, width: int, docs: bool) -> None:
    shots = ARTIFACTS / f"viewer-{width}"
    images = Path(__file__).parents[2] / "docs" / "images"
    browser.open(index.as_uri() + "#memo")
    browser.wait_for("document.querySelector('#memo article.memo-md h1') !== null")
    assert not browser.evaluate("document.querySelector('#memo').hidden")
    assert text_of(browser, "#memo article.memo-md h2") == "Key Findings"
    assert browser.evaluate("document.querySelectorAll('#memo article.memo-md li').length") >= 1
    assert "# Memo" not in text_of(browser, "#memo article.memo-md")
    assert browser.evaluate("(() => { const a = document.querySelector('#memo article.memo-md');"
                            "return a.scrollHeight <= a.clientHeight + 1 && "
                            "getComputedStyle(a).maxHeight === 'none' })()")
    assert browser.evaluate("!!document.querySelector('#memo article.memo-md a.ref')"), \
        "citations are live in the rendered memo"
    assert "http" not in text_of(browser, "#banner"), "the fork's policies by model name"
    facts = text_of(browser, "#facts")
    assert "qwen3-32b" in facts and "qwen3-8b" in facts
    assert "price" not in facts and "http" not in facts
    assert browser.evaluate("document.documentElement.scrollWidth <= innerWidth")
    browser.click("#memo article.memo-md a.ref")
    browser.wait_for("document.querySelector('#panel mark.cited') !== null")
    browser.screenshot(shots / "viewer.png")
    if docs and width == 1400:
        (images / "viewer.png").write_bytes((shots / "viewer.png").read_bytes())
        (images / "viewer-cited-passage.png").write_bytes((shots / "viewer.png").read_bytes())
    browser.click("#panel-close")
    browser.click("nav button[data-tab=scores]")
    assert browser.evaluate("location.hash") == "#scores"
    browser.evaluate("location.hash = '#usage'")  # the same page: no load, a hashchange
    browser.wait_for("!document.querySelector('#usage').hidden")
    assert browser.evaluate("document.querySelector('nav button.on').dataset.tab") == "usage"
    browser.evaluate("location.hash = '#turn-3'")
    browser.wait_for("document.getElementById('turn-3') !== null")
    browser.wait_for("(() => { const r = document.getElementById('turn-3')"
                     ".getBoundingClientRect(); return r.top >= -1 && r.top < innerHeight / 2 "
                     "})()")
    assert browser.evaluate("document.querySelector('#turn-3 h3 a').getAttribute('href')") == \
        "#turn-3"
    browser.evaluate("document.querySelectorAll('details.wave').forEach(d => d.open = true);"
                     "scrollTo(0, 0)")
    browser.screenshot(shots / "viewer-failures.png", full_page=True)
    if docs and width == 1400:
        (images / "viewer-failures.png").write_bytes((shots / "viewer-failures.png")
                                                     .read_bytes())
    assert browser.errors == []


def test_a_transcript_citation_shows_the_printed_page_and_lights_its_line(browser, tmp_path):
    """A memo citing ``[D00001 p.3, printed 453:7]``: the link says both, and the page opens
    titled with the printed page and line, that margin line lit."""
    from dealroom.room import IngestSettings, ingest

    src = tmp_path / "src"
    src.mkdir()
    pages = ["DEPOSITION OF JANE ROE"] + [f"Page {p}\n" + "\n".join(
        f"{n} A. The fee was never discussed." if (p, n) == (453, 7) else f"{n} Q. Asked?"
        for n in range(1, 26)) for p in (452, 453)]
    (src / "roe.txt").write_text("\f".join(pages))
    ingest(src, tmp_path / "room", IngestSettings(workers=1))
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({
        "version": 1, "harness": "rlm", "room": str(tmp_path / "room"), "root": "scripted",
        "sub": "oracle", "deliverables": {"memo": "memo.md"}}))
    events = [_event(0, "run_start", room="roe", docs=1, tokens=100),
              _event(1, "run_end", status="submitted", reason="submit()", turns=1,
                     ended="submitted")]
    (run / "trajectory.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (run / "output" / "memo.md").write_text(
        "# Memo\n\n- The witness says the board never heard of the fee. "
        "[D00001 p.3, printed 453:7]\n")
    browser.errors.clear()
    browser.open(write_trace(run, tmp_path / "view").as_uri() + "#memo")
    browser.wait_for("document.querySelector('#memo article.memo-md a.ref') !== null")
    assert text_of(browser, "#memo article.memo-md a.ref") == "D00001 p.3, printed 453:7"
    browser.click("#memo article.memo-md a.ref")
    marked = browser.wait_for("document.querySelector('#panel mark.cited')?.textContent")
    assert marked == "7 A. The fee was never discussed."
    assert text_of(browser, "#panel h2.doc-title") == "D00001 p.3 (printed 453:7) of 3"
    assert browser.errors == []


def test_the_viewer_tells_each_calls_model_and_cost_and_each_childs_totals(
        browser, small_generated_room, tmp_path):
    from dealroom.harness import run_agent
    from dealroom.models import Prices, ScriptedModel

    def sub(name, price):
        return ScriptedModel(["```python\nsubmit('child done')\n```"], cycle=True, name=name,
                             context_window=8192, prices=Prices(price, price, 4 * price))

    root = ScriptedModel(["```python\nr = llm_batch([{'prompt': 'a', 'model': 'fast'}, "
                          "{'prompt': 'b', 'model': 'strong'}])\n"
                          "print(rlm('look', sub='strong'))\n```",
                          "```python\nsubmit()\n```"])
    run_agent(small_generated_room, tmp_path / "run", root=root, depth=2,
              sub={"fast": sub("fast-m", 10.0), "strong": sub("strong-m", 200.0)})
    usage = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]
    (child, tree), = usage["by_child"].items()
    index = write_trace(tmp_path / "run", tmp_path / "view")
    browser.errors.clear()
    browser.open(index.as_uri())
    browser.wait_for("document.querySelectorAll('details.wave tr.call').length >= 2")
    rows = browser.evaluate("Array.from(document.querySelectorAll('details.wave tr.call'))"
                            ".map(r => Array.from(r.cells).map(c => c.textContent))")
    head = browser.evaluate("Array.from(document.querySelectorAll('details.wave th'))"
                            ".map(h => h.textContent)")
    assert "model" in head and "cost" in head
    cost, model = head.index("cost"), head.index("model")
    assert sorted(r[model] for r in rows) == ["fast", "strong"]
    by_model = {r[model]: float(r[cost].lstrip("$")) for r in rows}
    assert 0 < by_model["fast"] < by_model["strong"]
    summary = text_of(browser, "details.child > summary")
    assert summary.startswith(f"child {child} · look · submitted, 1 turns · "
                              f"{tree['calls']} calls")
    assert f"${tree['cost_usd']:.4f}" in summary
    usage_tab = text_of(browser, "#usage")
    assert "1 children" in usage_tab and "box on the timeline" in usage_tab  # one tree, not two
    assert browser.evaluate("document.querySelectorAll('#usage table.children').length") == 0
    assert "by sub-agent model" in usage_tab
    assert browser.errors == []
