"""``dealroom view DIR``: the runs of a folder or a sweep (status, room, policy, pass rate,
cost, turns), each opening its trace; served, the list follows runs as they are written."""

from __future__ import annotations

import json
import re
import shutil
import threading

import pytest
from support.browser import Browser, find_chromium
from support.cli import dealroom

from dealroom.report import Listing, make_server, watch_listing, write_listing

PUT = re.compile(r'^DR\.put\("runs",(.*)\);\n$', re.S)

chromium = pytest.mark.skipif(find_chromium() is None,
                              reason="no Chromium found (install Debian's `chromium`)")


def _rows(out):
    """The rows of ``out/data/runs.js`` (``DR.put("runs", {...});``)."""
    match = PUT.match((out / "data" / "runs.js").read_text(encoding="utf-8"))
    assert match
    return json.loads(match.group(1))["rows"]


def test_a_sweep_lists_each_episode_with_its_figures(copied_sweep, tmp_path):
    index = write_listing(copied_sweep, tmp_path / "list")
    rows = _rows(index.parent)
    episodes = json.loads((copied_sweep / "sweep.json").read_text())["episodes"]
    assert len(rows) == len(episodes)
    scores = {str(copied_sweep / "episodes" / e["id"]): json.loads(
        (copied_sweep / "episodes" / e["id"] / "scores.json").read_text())["pass_rate"]
        for e in episodes}
    assert {r["path"]: r["pass_rate"] for r in rows} == scores
    assert {r["policy"] for r in rows} == {"scripted + oracle", "scripted:coverage=0.3 + oracle"}
    assert {(r["status"], r["room"]) for r in rows} == {("submitted", "g20")}
    assert all(r["turns"] > 0 and r["cost_usd"] >= 0 for r in rows)
    for r in rows:  # each opens its own trace
        assert (index.parent / r["trace"]).is_file()
    assert len({r["trace"] for r in rows}) == len(rows)


def test_a_folder_with_no_run_writes_nothing(tmp_path):
    (tmp_path / "empty").mkdir()
    done = dealroom("view", tmp_path / "empty", "--out", tmp_path / "list")
    assert done.returncode != 0 and "no run folders found" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "list").exists()


@chromium
def test_the_list_opens_each_run_from_disk(scripted_run, child_run, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(scripted_run, runs / "scripted")
    shutil.copytree(child_run, runs / "child")
    done = dealroom("view", runs)
    assert done.returncode == 0, done.stderr
    index = runs / "view" / "index.html"
    with Browser() as browser:
        browser.open(index.resolve().as_uri())
        cells = browser.evaluate("[...document.querySelectorAll('#runs tbody tr')].map("
                                 "r => [...r.cells].map(c => c.textContent))")
        rate = json.loads((scripted_run / "scores.json").read_text())["pass_rate"]
        assert sorted(cells) == [
            ["child", "submitted", "g20", "scripted + oracle", "0.500", "0.0060", "1"],
            ["scripted", "submitted", "g20", "scripted + oracle", f"{rate:.3f}", "0.0000",
             str(next(r["turns"] for r in _rows(index.parent) if r["name"] == "scripted"))]]
        browser.click("tr[data-run='child'] a")
        browser.wait_for("document.title.includes('child') && "
                         "document.querySelectorAll('section.turn').length > 0")
        assert not browser.errors


@chromium
def test_served_the_list_follows_runs_as_they_are_written(scripted_run, tmp_path):
    runs, out = tmp_path / "sweep", tmp_path / "list"
    shutil.copytree(scripted_run, runs / "first")
    listing = Listing(runs, out)
    listing.update()
    server = make_server(out, 0)
    stop = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=watch_listing, args=(listing, stop, 0.2), daemon=True).start()
    rows = "[...document.querySelectorAll('#runs tbody tr')]"
    try:
        with Browser() as browser:
            browser.open(f"http://127.0.0.1:{server.server_address[1]}/")
            assert browser.evaluate(f"{rows}.length") == 1
            # a second run starts: it shows as running, with the turns it has so far
            lines = (scripted_run / "trajectory.jsonl").read_text().splitlines(keepends=True)
            shutil.copytree(scripted_run, runs / "second",
                            ignore=shutil.ignore_patterns("scores.json", "trajectory.jsonl"))
            (runs / "second" / "trajectory.jsonl").write_text("".join(lines[:-1]))
            browser.wait_for(f"{rows}.length == 2 && document.querySelector("
                             "\"tr[data-run='second'] .status\").textContent == 'running'")
            # it ends: the list says so without a reload
            with open(runs / "second" / "trajectory.jsonl", "a") as fh:
                fh.write(lines[-1])
            browser.wait_for("document.querySelector(\"tr[data-run='second'] .status\")"
                             ".textContent == 'submitted'")
            assert not browser.errors
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
