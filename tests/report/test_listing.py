"""``dealroom view DIR``: the runs of a folder or a sweep (status, room, policy, pass rate,
cost, turns), each opening its trace; served, the list follows runs as they are written."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

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


def test_named_sub_agents_show_in_the_policy(generated_room, tmp_path):
    from dealroom.harness import run_agent

    run_agent(generated_room, tmp_path / "runs" / "named", root="scripted",
              sub={"fast": "oracle:recall=0.5", "strong": "oracle"}, max_turns=3)
    [row] = _rows(write_listing(tmp_path / "runs", tmp_path / "list").parent)
    assert row["policy"] == "scripted + fast=oracle:recall=0.5, strong=oracle"


def test_a_follow_up_answer_rewrites_the_runs_trace(scripted_run, tmp_path):
    from dealroom.harness import ask_run
    from dealroom.testing import ScriptedModel

    runs, out = tmp_path / "runs", tmp_path / "list"
    shutil.copytree(scripted_run, runs / "first")
    listing = Listing(runs, out)
    listing.update()
    assert not (out / "runs" / "first" / "asks").exists()
    ask_run(runs / "first", "How many findings?",
            root=ScriptedModel(['```python\nsubmit(f"{len(findings)} findings")\n```']))
    listing.update()  # what a served list's next pass does
    assert (out / "runs" / "first" / "asks" / "1" / "index.html").is_file()


def test_view_serve_over_a_folder_follows_its_runs(scripted_run, tmp_path):
    """``dealroom view DIR --serve`` in its own process: a run written after it started
    is listed on a later load of the list's data, without restarting it."""
    runs = tmp_path / "runs"
    shutil.copytree(scripted_run, runs / "first")
    proc = subprocess.Popen([sys.executable, "-m", "dealroom", "view", str(runs), "--serve",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "COLUMNS": "300"})
    try:
        line = ""
        while "serving on" not in line:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
        url = re.search(r"http://[\d.]+:\d+/", line).group(0)
        assert [r["name"] for r in _served_rows(url)] == ["first"]
        shutil.copytree(scripted_run, runs / "second")
        deadline = time.monotonic() + 60  # the list is rewritten every REFRESH_S seconds
        while len(rows := _served_rows(url)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sorted((r["name"], r["status"]) for r in rows) == [
            ("first", "submitted"), ("second", "submitted")]
        assert "<html" in _get(url + rows[1]["trace"])
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def _served_rows(url: str) -> list[dict]:
    match = PUT.match(_get(url + "data/runs.js"))
    assert match
    return json.loads(match.group(1))["rows"]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8")
