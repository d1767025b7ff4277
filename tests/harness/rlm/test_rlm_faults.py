"""Broken endpoints through ``dealroom run``: failures are recorded per call, the run's status
and exit code say so, the memo says what was read, and nothing hostile reaches the terminal."""

import json

import pytest
from support import cli

from dealroom.errors import ConfigError
from dealroom.harness import run_agent
from dealroom.testing import Fault, MockOpenAIServer

FINDING = ("ISSUE: Acme may terminate on a change of control | SEVERITY: high | "
           "AMOUNT: $2,500,000 | PAGE: 2")
FAST = "backoff_s=0.01"
"""Retries as many, with short back-off: what is tested is that they happen."""


def events_of(run):
    return [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]


def sub_calls(run):
    return [e for e in events_of(run) if e["type"] == "model_call" and e["role"] == "sub"]


def dealroom(*args):
    """``dealroom ARGS`` in this process (support.cli)."""
    return cli.dealroom(*args)


@pytest.mark.parametrize("kind", ["html", "not_json", "empty_choices", "no_message",
                                  "null_content", "deep_json"])
def test_a_malformed_endpoint_degrades_the_run_and_the_memo_claims_nothing(small_room,
                                                                           tmp_path, kind):
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: Fault(kind)) as srv:
        done = dealroom("run", small_room, "--out", run, "--sub",
                        f"mock@{srv.base_url}#hedge=0,{FAST}", "--max-turns", "8")
    assert done.returncode == 3, done.stderr
    assert "degraded" in done.stdout and "4 failed at the provider" in done.stdout
    calls = sub_calls(run)
    assert len(calls) == 4 and all(e["error"] and e["output"] is None for e in calls)
    expected = "no_content" if kind == "null_content" else "malformed"
    assert {e["provider"]["kind"] for e in calls} == {expected}
    assert all(e["provider"]["attempts"] == 5 for e in calls), "retried before giving up"
    memo = (run / "output" / "memo.md").read_text()
    assert "We reviewed all" not in memo and "We reviewed 0 of the 4 documents" in memo
    assert "## Documents Not Reviewed" in memo and memo.count("not read (") == 4
    end = [e for e in events_of(run) if e["type"] == "run_end"][0]
    assert end["status"] == "degraded" and "4 of 4 sub-calls failed" in end["reason"]


def test_one_bad_read_of_four_is_named_in_the_memo(small_room, tmp_path):
    def reply(req):
        content = req["messages"][-1]["content"]
        if "Demand letter" in content:
            return Fault("null_content")
        return FINDING if "Change of Control" in content else "NONE"

    with MockOpenAIServer(reply) as srv:
        result = run_agent(small_room, tmp_path / "run", sub=f"mock@{srv.base_url}#{FAST}",
                           max_turns=8)
    assert result.status == "degraded" and "1 of 4 sub-calls failed (25%" in result.reason
    memo = (tmp_path / "run" / "output" / "memo.md").read_text()
    assert "We reviewed 3 of the 4 documents of the data room in full" in memo
    not_reviewed = memo.split("## Documents Not Reviewed")[1].split("##")[0]
    assert "D00003" in not_reviewed and "D00002" not in not_reviewed
    assert "content is None" in not_reviewed
    assert "[D00002 p.2]" in memo, "what was read is still reported"


def test_a_resumed_run_counts_the_failures_its_records_replay(small_room, tmp_path):
    from dealroom.harness import resume_run

    def reply(req):
        content = req["messages"][-1]["content"]
        return Fault("null_content") if "Demand letter" in content else "NONE"

    run = tmp_path / "run"
    with MockOpenAIServer(reply) as srv:
        run_agent(small_room, run, sub=f"mock@{srv.base_url}#{FAST}", max_turns=8)
        lines = (run / "trajectory.jsonl").read_text().splitlines()
        ends = [n for n, x in enumerate(lines) if '"run_end"' in x]
        (run / "trajectory.jsonl").write_text("\n".join(lines[:ends[0]]) + "\n")
        (run / "metrics.json").unlink()
        result = resume_run(run, sub=f"mock@{srv.base_url}#{FAST}")
    assert result.status == "degraded" and "1 of 4 sub-calls failed" in result.reason
    end = [e for e in events_of(run) if e["type"] == "run_end"][-1]
    assert end["ended"] == "submitted" and end["status"] == "degraded"


def test_a_ten_megabyte_reply_is_cut_and_the_cut_recorded(small_room, tmp_path):
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: Fault.huge(10 * 2**20)) as srv:
        result = run_agent(small_room, run, sub=f"mock@{srv.base_url}#stream=off",
                           max_turns=8)
    assert result.status == "submitted"
    calls = sub_calls(run)
    assert all(e["provider"]["cut_bytes"] > 0 for e in calls)
    assert all(len(e["output"].encode()) <= 512 * 16 for e in calls)
    assert (run / "output" / "memo.md").stat().st_size < 100_000
    assert (run / "trajectory.jsonl").stat().st_size < 1_000_000
    cells = [e for e in events_of(run) if e["type"] == "cell"]
    assert any("the reply was cut to 8,192 bytes" in e["output"] for e in cells)


def test_a_stream_cut_at_the_cap_before_it_finished_is_a_failed_call(small_room, tmp_path):
    """Never a success: the memo must not claim the documents were reviewed."""
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: Fault.huge(10 * 2**20)) as srv:
        result = run_agent(small_room, run, sub=f"mock@{srv.base_url}#{FAST}", max_turns=8)
    assert result.status == "degraded" and "4 of 4 sub-calls failed" in result.reason
    calls = sub_calls(run)
    assert {e["provider"]["kind"] for e in calls} == {"truncated_stream"}
    assert all(e["output"] is None and "cut at" in e["error"] for e in calls)
    memo = (run / "output" / "memo.md").read_text()
    assert "We reviewed all" not in memo and "We reviewed 0 of the 4 documents" in memo


def test_impossible_usage_is_an_error_and_the_token_budget_still_holds(small_room, tmp_path):
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: Fault.bad_usage(prompt_tokens=-9989296,
                                                      completion_tokens=5)) as srv:
        result = run_agent(small_room, run, sub=f"mock@{srv.base_url}#{FAST}", max_turns=8,
                           max_tokens=20_000)
    calls = sub_calls(run)
    assert calls and all(e["provider"]["kind"] == "usage" for e in calls)
    assert all(e["usage"]["input_tokens"] > 0 for e in calls), "the worst case is charged"
    total = result.metrics["usage"]["total"]
    assert total["input_tokens"] >= 0
    assert total["input_tokens"] + total["output_tokens"] <= 20_000


def test_a_hung_call_in_a_wave_is_hedged_in_seconds(small_room, tmp_path):
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: FINDING, latency=0.05) as srv:
        srv.fail_next(Fault.timeout(3600))  # outlives the test's time-out: only a hedge ends it
        result = run_agent(small_room, run, sub=f"mock@{srv.base_url}", max_turns=8)
    assert result.status == "submitted"
    calls = sub_calls(run)
    assert all(e["error"] is None for e in calls)
    hedged = [e for e in calls if e["provider"]["hedge"]]
    assert len(hedged) == 1 and hedged[0]["provider"]["hedge"]["winner"] == "hedge"
    assert hedged[0]["provider"]["attempts"] == 2


def test_max_cost_needs_prices_and_is_enforced_from_declared_ones(small_room, tmp_path):
    with MockOpenAIServer(lambda req: FINDING) as srv:
        with pytest.raises(ConfigError, match="has no prices"):
            run_agent(small_room, tmp_path / "a", sub=f"mock@{srv.base_url}",
                      max_cost_usd=0.0001)
        assert not (tmp_path / "a").exists() and srv.calls == 0
        done = dealroom("run", small_room, "--out", tmp_path / "b", "--sub",
                        f"mock@{srv.base_url}", "--max-cost", "0.0001")
        assert done.returncode == 1 and "#price_input=0.5,price_output=1.5" in done.stderr
        priced = f"mock@{srv.base_url}#price_input=20,price_output=20"
        result = run_agent(small_room, tmp_path / "c", sub=priced, max_cost_usd=0.05)
    cost = result.metrics["usage"]["total"]["cost_usd"]
    assert 0 < cost <= 0.05
    assert len(sub_calls(tmp_path / "c")) < 4, "the budget stopped the reads"


def test_control_sequences_never_reach_the_memo_or_the_terminal(small_room, tmp_path):
    hostile = ("ISSUE: \x1b]0;owned\x07Acme may \x1b[31mterminate\x1b[0m on a change of "
               "control | SEVERITY: high | AMOUNT: none | PAGE: 2\x1b[2J")
    run = tmp_path / "run"
    with MockOpenAIServer(hostile) as srv:
        run_agent(small_room, run, sub=f"mock@{srv.base_url}", max_turns=8)
        cell = dealroom("repl", small_room, "--sub", f"mock@{srv.base_url}", "-c",
                        "print(llm('read', docs=['D00002'])); print(chr(27) + '[2Jwiped')")
    memo = (run / "output" / "memo.md").read_text()
    assert "\x1b" not in memo and "\x07" not in memo and "Acme may terminate" in memo
    assert all(e["provider"]["stripped"] > 0 for e in sub_calls(run))
    assert cell.returncode == 0, cell.stderr
    assert "\x1b" not in cell.stdout and "Acme may terminate on a change" in cell.stdout
    assert "\\x1b[2Jwiped" in cell.stdout


def test_a_run_whose_every_call_stalls_records_every_call_and_is_degraded(small_room,
                                                                          tmp_path):
    """The run's clock runs out while every sub-call hangs: each request sent is in the
    records (cancelled, with its attempts and a usage estimate) and the run is degraded."""
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: Fault.timeout(600)) as srv:
        done = dealroom("run", small_room, "--out", run, "--sub",
                        f"mock@{srv.base_url}#hedge=0", "--max-turns", "8",
                        "--max-seconds", "4")
        requests = srv.calls
    assert done.returncode == 3, done.stdout + done.stderr
    calls = sub_calls(run)
    assert requests >= 1 and len(calls) == requests == 4
    assert all(e["error"].startswith("cancelled") for e in calls)
    assert all(e["provider"]["kind"] == "cancelled" and e["provider"]["attempts"] == 1
               for e in calls)
    assert all(e["provider"]["usage_estimate"]["input_tokens"] > 0 for e in calls)
    end = [e for e in events_of(run) if e["type"] == "run_end"][0]
    assert end["status"] == "degraded" and end["ended"] == "budget_exhausted"
    assert "4 of 4 sub-calls failed" in end["reason"]


def test_a_dead_endpoint_costs_each_call_one_deadline(small_room, tmp_path):
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: Fault.timeout(600)) as srv:
        result = run_agent(small_room, run, max_turns=8,
                           sub=f"mock@{srv.base_url}#hedge=0,read_timeout=0.5,deadline=1")
    calls = sub_calls(run)
    assert result.status == "degraded" and len(calls) == 8  # each sent again, in a later wave
    assert len({e["call_id"] for e in calls}) == 4
    assert all("within the call's deadline of 1s" in e["error"] for e in calls)
    assert all(e["provider"]["kind"] == "timeout" and e["provider"]["attempts"] >= 1
               and e["provider"]["usage_estimate"]["input_tokens"] > 0 for e in calls)


# issue 36 item 3: a slice whose call timed out is sent again in a later wave, not dropped
def test_a_slice_whose_call_timed_out_is_sent_again_in_a_later_wave(small_room, tmp_path):
    run = tmp_path / "run"
    with MockOpenAIServer(lambda req: FINDING) as srv:
        srv.fail_next(Fault.timeout(600))  # the first request only
        result = run_agent(small_room, run, max_turns=8,
                           sub=f"mock@{srv.base_url}#hedge=0,max_retries=0,deadline=1")
    calls = sub_calls(run)
    failed = [e for e in calls if e["error"]]
    assert len(failed) == 1 and failed[0]["provider"]["kind"] == "timeout"
    again = [e for e in calls if e["call_id"] == failed[0]["call_id"] and not e["error"]]
    assert len(again) == 1 and again[0]["wave"] > failed[0]["wave"]
    assert result.status == "submitted"
    memo = (run / "output" / "memo.md").read_text()
    assert "not read (" not in memo and "We reviewed all" in memo
