"""``dealroom report`` and ``dealroom view``: the folders written, bad input one line."""

import json
import socket
import subprocess
import sys
import time
import urllib.request

from support.cli import dealroom


def dealroom_cli(*args):
    return dealroom(*args)  # in this process (support.cli)


def test_report_writes_the_page_and_its_numbers(sweep_builder, tmp_path):
    sweep = sweep_builder("sweep")
    sweep.episode("r1", "a", pass_rate=0.5)
    sweep.episode("r1", "b", pass_rate=1.0, all_pass=True)
    done = dealroom_cli("report", sweep.write(), "--out", tmp_path / "rep", "--title", "T1")
    assert done.returncode == 0, done.stderr
    assert "index.html" in done.stdout
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["title"] == "T1" and len(report["headline"]) == 2
    assert "<title>T1</title>" in (tmp_path / "rep" / "index.html").read_text()


def test_bad_input_is_one_line(tmp_path):
    done = dealroom_cli("report", tmp_path / "missing", "--out", tmp_path / "rep")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("x")
    done = dealroom_cli("view", tmp_path / "notes", "--out", tmp_path / "v")
    assert done.returncode == 1 and "not a run folder" in done.stderr
    assert not (tmp_path / "v").exists()


def test_view_serves_on_loopback(tmp_path, run_maker):
    run = run_maker(tmp_path / "run", "# Memo\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dealroom", "view", str(run), "--out",
                             str(tmp_path / "v"), "--serve", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                    assert b"dealroom trace: run" in r.read()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
