"""A tampered run folder or sweep (markup where numbers belong) runs no script in the report or
the viewer: types are checked on read, a clear InputError instead of a crash, and every value
that reaches a page is escaped there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.browser import Browser, find_chromium

from dealroom.errors import InputError
from dealroom.report import build_report, write_trace

XSS = "<img src=x id=pwned onerror=window.pwned=1>"


def edit_jsonl(path: Path, change) -> None:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for record in records:
        change(record)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def set_turn(record: dict) -> None:
    if "turn" in record:
        record["turn"] = XSS


def set_max_turns(config: dict) -> None:
    config["settings"]["max_turns"] = XSS


def set_history_turn(record: dict) -> None:
    record["turn"] = "3"


TAMPERED = [("trajectory.jsonl", edit_jsonl, set_turn, "turn"),
            ("config.json", edit_json, set_max_turns, "max_turns"),
            ("memo_history.jsonl", edit_jsonl, set_history_turn, "turn")]


@pytest.mark.parametrize("name,edit,change,field", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_view_and_report_refuse_a_run_whose_numbers_are_not_numbers(child_run, tmp_path, name,
                                                                    edit, change, field):
    edit(child_run / name, change)
    with pytest.raises(InputError, match=f"{field} is .*not an integer"):
        write_trace(child_run, tmp_path / "view")
    with pytest.raises(InputError, match=f"{field} is .*not an integer"):
        build_report([child_run], tmp_path / "report")


def test_a_sweep_whose_seed_or_turns_are_markup_is_refused(copied_sweep, tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(copied_sweep, sweep)

    def seed(record: dict) -> None:
        record["episodes"][0]["seed"] = f"1{XSS}"

    edit_json(sweep / "sweep.json", seed)
    with pytest.raises(InputError, match="seed is .*not an integer"):
        build_report([sweep], tmp_path / "report")

    def escape(record: dict) -> None:
        record["episodes"][0].update(seed=0, id="../../../etc")

    edit_json(sweep / "sweep.json", escape)
    with pytest.raises(InputError, match="leaves episodes/"):
        build_report([sweep], tmp_path / "report2")


def test_markup_in_a_run_s_metrics_is_refused_naming_the_key(child_run, tmp_path):
    """metrics.json is typed: markup where a count belongs never reaches a page."""
    (child_run / "metrics.json").write_text(json.dumps(
        {"behaviour": {"turns": f"<script>alert(1)</script>{XSS}", "sub_calls": XSS},
         "usage": {"total": {"input_tokens": XSS}}}))
    with pytest.raises(InputError, match=r"metrics.json: usage.total.input_tokens is '<img "
                                         r".*, not an integer: the run folder is damaged"):
        build_report([child_run], tmp_path / "report")
    assert not (tmp_path / "report" / "index.html").exists()


def test_markup_in_the_viewer_s_data_is_shown_as_text(child_run, tmp_path):
    """The viewer escapes every value it puts in the page (turns, budgets, pages of slices,
    memo history turns), even when the data pages themselves were edited."""
    if find_chromium() is None:
        pytest.skip("no Chromium found (install Debian's `chromium`)")
    index = write_trace(child_run, tmp_path / "view")
    data = index.parent / "data"
    items = data / "items-0000.js"
    prefix, _, rest = items.read_text().partition(",")
    page = json.loads(rest.removesuffix(");\n"))
    for n, item in enumerate(page):
        if "turn" in item and item["k"] != "budget":
            item["turn"] = XSS.replace("pwned", f"pwned-turn-{n}")
        if item["k"] == "budget":
            item.update(turn=XSS.replace("pwned", "pwned-bt"), of=XSS.replace("pwned", "pwned-of"))
        if item["k"] == "sub":
            item["docs"][0]["pages"] = ['1"><img id=pwned-page src=x>', 2]
    items.write_text(f"{prefix},{json.dumps(page)});\n")
    memo = data / "memo.js"
    prefix, _, rest = memo.read_text().partition(",")
    history = json.loads(rest.removesuffix(");\n"))
    history["history"][0]["turn"] = XSS.replace("pwned", "pwned-memo")
    memo.write_text(f"{prefix},{json.dumps(history)});\n")
    with Browser(timeout=30) as browser:
        browser.open(index.as_uri())
        browser.wait_for("document.querySelector('.budget') !== null")
        browser.click("nav button[data-tab=memo]")
        browser.wait_for("document.querySelector('#memo .history button[data-turn]') !== null")
        injected = browser.evaluate(
            "Array.from(document.querySelectorAll('[id^=pwned]')).map(e => e.id)")
        assert injected == []
        assert "pwned-bt" in browser.evaluate("document.querySelector('.budget').textContent")
        assert browser.errors == []


@pytest.mark.parametrize("name,content,message", [
    ("scores.json", {"judge": "reference", "pass_rate": 0.5},
     "judge is 'reference', not an object"),
    ("scores.json", {"criteria_results": "all passed"},
     "criteria_results is 'all passed', not a list"),
    ("scores.json", {"criteria_results": [{"verdict": ["pass"]}]},
     "verdict is \\['pass'\\], not a string"),
    ("scores_by_turn.json", {"by_turn": [{"turn": XSS, "pass_rate": 1}]},
     "turn is .*, not an integer"),
    ("metrics.json", {"coverage": [0.5]}, "coverage is \\[0.5\\], not an object"),
], ids=["judge", "criteria", "verdict", "by-turn", "metrics"])
def test_scores_and_metrics_of_the_wrong_shape_are_a_clear_error(child_run, tmp_path, name,
                                                                 content, message):
    (child_run / name).write_text(json.dumps(content))
    with pytest.raises(InputError, match=message):
        write_trace(child_run, tmp_path / "view")
    with pytest.raises(InputError, match=message):
        build_report([child_run], tmp_path / "report")
