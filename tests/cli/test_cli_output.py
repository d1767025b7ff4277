"""Output that works off a terminal and at 80 columns: plain progress lines in a log, paths
and commands never broken, ``summary`` readable and never cut, ``view`` and ``demo`` saying
where they wrote."""

import io
import tempfile
from pathlib import Path

from rich.console import Console
from support.cli import dealroom

from dealroom.cli.display_live import RunDisplay
from dealroom.cli.display_scores import render_summary
from dealroom.testing import MockOpenAIServer

LONG = "a-folder-with-a-long-name-so-that-paths-pass-eighty-columns"


class Probe:
    def coverage(self):
        return 0.25


def test_off_a_terminal_a_plain_line_comes_at_each_interval_and_at_the_end():
    out = io.StringIO()
    ticks = iter([False, False, False, True])  # three intervals pass, then the run ends
    asked = []

    def wait(seconds):
        asked.append(seconds)
        return next(ticks)

    with RunDisplay(Console(file=out, width=80), max_turns=5, every=7.0, wait=wait) as display:
        display({"type": "model_call", "role": "root", "turn": 2,
                 "usage": {"input_tokens": 1200, "cost_usd": 0.01}}, Probe())
        for _ in range(3):
            display({"type": "model_call", "role": "sub", "usage": {"output_tokens": 10}},
                    Probe())
        display({"type": "wave", "ok": 2, "failed": 1}, Probe())
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 and all(line.startswith("progress: turn ") for line in lines)
    assert asked == [7.0] * 4
    assert lines[-1].startswith("progress: turn 2/5, sub-calls 3 done (1 failed) in 1 waves, "
                                "tokens 1.2k in / 30 out, $0.0100, coverage 25.0%, elapsed ")
    assert "\x1b" not in out.getvalue()  # no cursor movement or colour in a log


def test_on_a_terminal_no_plain_lines_and_with_zero_none():
    tty = io.StringIO()
    with RunDisplay(Console(file=tty, force_terminal=True, width=80), every=0.001):
        pass
    assert "progress:" not in tty.getvalue()
    log = io.StringIO()
    with RunDisplay(Console(file=log, width=80), every=0):
        pass
    assert log.getvalue() == ""


def test_a_run_through_a_pipe_prints_progress_lines(small_room, tmp_path):
    with MockOpenAIServer(lambda request: "NONE") as server:
        done = dealroom("run", small_room, "--out", tmp_path / "run", "--sub",
                        f"m@{server.base_url}", "--max-turns", "8")
    assert done.returncode == 0, done.stdout + done.stderr
    progress = [line for line in done.stdout.splitlines() if line.startswith("progress: ")]
    assert progress and "sub-calls 4 done in 1 waves" in progress[-1], done.stdout


def whole_lines(text: str, *wanted: str) -> None:
    lines = text.splitlines()
    for item in wanted:
        assert any(item in line for line in lines), f"{item!r} broken or missing in\n{text}"


def test_the_demo_says_where_it_wrote_and_the_next_commands_unbroken_at_80_columns(
        tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / LONG / "demo"
    with MockOpenAIServer(lambda request: "NONE") as server:
        done = dealroom("demo", "--out", out, "--docs", "4", "--sub", f"m@{server.base_url}")
    assert done.returncode == 0, done.stdout + done.stderr
    run = out / "run"
    assert (run / "scores.json").is_file() and (out / "room" / "room.json").is_file()
    whole_lines(done.stdout, str(out), f"dealroom view {run}", f"dealroom inspect {out / 'room'}",
                f"dealroom judge {run} --judge ", str(run / "scores.json"),
                str(run / "output" / "memo.md"))
    assert done.stdout.rstrip().splitlines()[-1].strip().startswith("dealroom judge "), \
        "it ends with the next commands"


def test_judge_and_view_print_paths_whole_and_view_writes_beside_the_run(
        generated_room, tmp_path, monkeypatch):
    from dealroom.harness import run_agent

    monkeypatch.setenv("COLUMNS", "80")
    run = tmp_path / LONG / "run"
    run_agent(generated_room, run, root="scripted", sub="oracle", max_turns=3)
    judged = dealroom("judge", run)
    assert judged.returncode == 0, judged.stderr
    whole_lines(judged.stdout, str(run / "scores.json"))
    done = dealroom("view", run)
    assert done.returncode == 0, done.stdout + done.stderr
    index = run / "view" / "index.html"
    assert index.is_file()
    whole_lines(done.stdout, str(index), index.resolve().as_uri())
    again = dealroom("view", run)  # rewritten in place
    assert again.returncode == 0, again.stderr

    before = set(Path(tempfile.gettempdir()).glob("dealroom-view-*"))
    empty = tmp_path / "not-a-run"
    empty.mkdir()
    refused = dealroom("view", empty)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert list(empty.iterdir()) == []
    assert set(Path(tempfile.gettempdir()).glob("dealroom-view-*")) == before


def test_summary_at_80_columns_and_through_a_pipe_cuts_nothing(summary_runs, monkeypatch):
    from dealroom.eval import summarize_runs
    from dealroom.runs import find_runs

    result = summarize_runs(find_runs(summary_runs))
    narrow = io.StringIO()
    render_summary(result, Console(file=narrow, width=80, force_terminal=True))
    monkeypatch.setenv("COLUMNS", "80")
    piped = dealroom("summary", *summary_runs)
    assert piped.returncode == 0, piped.stderr
    for text in (narrow.getvalue(), piped.stdout):
        assert "…" not in text, text
        whole_lines(text, "status", "headline", "total", "coverage", "tokens in/out",
                    "root share in/out", "sub-calls", "turns", "submitted")
    wide = io.StringIO()
    render_summary(result, Console(file=wide, width=200, force_terminal=True,
                                   color_system=None))
    assert "┃ run" in wide.getvalue()  # a table where it fits


def test_a_sweep_off_a_terminal_prints_a_line_per_episode_ended():
    from dealroom.cli.display_eval import SweepDisplay
    from dealroom.eval import SweepProgress

    log = io.StringIO()
    with SweepDisplay(Console(file=log, width=80)) as display:
        for done in range(3):
            display(SweepProgress(total=4, done=done, failed=0, running=1,
                                  pass_rates=(0.5,) * done))
    lines = log.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "progress: episodes 0/4 (0 failed)", "progress: episodes 1/4 (0 failed)",
        "progress: episodes 2/4 (0 failed)"]
    assert "pass rate 50.0%" in lines[-1] and "\x1b" not in log.getvalue()
