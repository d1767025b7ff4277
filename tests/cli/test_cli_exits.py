"""Exit codes a script can trust: each end status its documented code, for ``run``,
``resume``, ``eval sweep`` and ``doctor`` (docs/commands.md, "Exit codes")."""

import re
from pathlib import Path

from support.cli import dealroom

import dealroom as package
from dealroom.cli._exit import END_STATUS_CODES, exit_code, nonzero_counts, sweep_exit_code
from dealroom.testing import MockOpenAIServer

HARNESS = Path(package.__file__).parent / "harness"
ENDINGS = (r'status, reason = "(\w+)"', r'return "(\w+)", ', r'status = "(\w+)" if spent',
           r'if spent == "turns" else "(\w+)"', r'return "(degraded)"')


def test_every_status_a_harness_can_end_with_has_its_code():
    found = {status for path in HARNESS.rglob("*.py") for pattern in ENDINGS
             for status in re.findall(pattern, path.read_text())}
    assert {"submitted", "finished", "max_turns", "budget_exhausted", "errors", "error",
            "degraded"} <= found
    assert found <= END_STATUS_CODES.keys(), found - END_STATUS_CODES.keys()
    assert {s for s in found if exit_code(s)} == {"errors", "error", "degraded"}
    assert exit_code("something new") != 0  # never taken for success


def test_a_sweep_exits_with_its_worst_episode_and_counts_them():
    assert sweep_exit_code({"submitted": 3, "max_turns": 1}, failed=0) == 0
    assert sweep_exit_code({"submitted": 3, "errors": 2}, failed=0) == 4
    assert sweep_exit_code({"submitted": 3}, failed=1) == 1
    assert nonzero_counts({"submitted": 3, "errors": 2, "degraded": 1}) == \
        {"degraded": 1, "errors": 2}


def no_code(request):
    return "I will think about it first."


def test_a_run_that_ends_with_errors_exits_non_zero_and_so_does_its_resume(small_room,
                                                                            tmp_path):
    run = tmp_path / "run"
    with MockOpenAIServer(no_code) as server:
        done = dealroom("run", small_room, "--out", run, "--root", f"m@{server.base_url}",
                        "--sub", f"m@{server.base_url}", "--max-turns", "6",
                        "--max-errors", "2")
        assert done.returncode == 4, done.stdout + done.stderr
        assert "errors" in done.stdout and "Traceback" not in done.stderr
        lines = (run / "trajectory.jsonl").read_text().splitlines()
        (run / "trajectory.jsonl").write_text("\n".join(lines[:2]) + "\n")  # killed early
        again = dealroom("resume", run)
    assert again.returncode == 4, again.stdout + again.stderr


def test_a_sweep_with_an_episode_ending_in_errors_exits_non_zero_and_says_how_many(
        generated_room, tmp_path):
    with MockOpenAIServer(no_code) as server:
        spec = tmp_path / "spec.toml"
        spec.write_text(f'rooms = ["{generated_room}"]\nroots = ["m@{server.base_url}"]\n'
                        'subs = ["oracle"]\nmax_turns = [4]\n[settings]\nmax_errors = 2\n')
        done = dealroom("eval", "sweep", spec, "--out", tmp_path / "out", "--workers", "1")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "1 episode(s) ended with a status that exits non-zero: 1 errors" in done.stdout


def test_doctor_fails_on_a_named_model_not_reachable_and_on_a_warning_when_strict(
        tmp_path, monkeypatch):
    import socket

    import dealroom._doctor as doctor

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    models = tmp_path / "models.toml"
    models.write_text(f'[models.down]\nbase_url = "http://127.0.0.1:{port}/v1"\n'
                      'model = "m"\ncontext_window = 8192\n')
    down = dealroom("doctor", "--models", models, "--no-start-local")
    assert down.returncode == 1, down.stdout
    assert "model down" in down.stdout and "something needed is missing" in down.stdout

    monkeypatch.setattr(doctor, "drift_check",
                        lambda: doctor.Check("pins", "warn", "1 package differs", "pip ..."))
    monkeypatch.chdir(tmp_path / "..")  # no models.toml here
    monkeypatch.setenv("HOME", str(tmp_path))
    lenient = dealroom("doctor", "--no-start-local")
    strict = dealroom("doctor", "--no-start-local", "--strict")
    assert lenient.returncode == 0, lenient.stdout
    assert strict.returncode == 1 and "--strict: a check warned" in strict.stdout
