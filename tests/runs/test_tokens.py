"""tokens.jsonl: the token-exact records of a run's calls, and the events that point at them."""

import json

import pytest
from support.events import fields

from dealroom.errors import ConfigError
from dealroom.runs import (
    RunFolder,
    RunRecorder,
    TokenRecord,
    read_all_tokens,
    read_tokens,
    write_tokens,
)


def test_token_records_go_to_a_side_file_the_event_points_at(tmp_path):
    a = TokenRecord([1, 2, 3], [4, 5], [-0.1234567891, -2.0], eos=True)
    b = TokenRecord([1, 2, 3, 4, 5, 9], [7], [-0.5], prompt_reused=5)
    ref_a = write_tokens(tmp_path, "root/t1", a)
    ref_b = write_tokens(tmp_path, "root/t2", b)
    assert ref_a == {"file": "tokens.jsonl", "offset": 0} and ref_b["offset"] > 0
    assert read_tokens(tmp_path, ref_b) == b
    assert read_tokens(tmp_path, ref_a).logprobs == [-0.123457, -2.0]
    write_tokens(tmp_path, "root/t2", TokenRecord([1], [8], [-1.0]))  # the call made again
    with open(tmp_path / "tokens.jsonl", "a") as fh:
        fh.write('{"call_id": "root/t3", "prompt')  # torn by a kill
    records = read_all_tokens(tmp_path)
    assert sorted(records) == ["root/t1", "root/t2"] and records["root/t2"].completion_ids == [8]
    assert json.loads((tmp_path / "tokens.jsonl").read_text().splitlines()[0])["eos"] is True
    with pytest.raises(ConfigError, match="logprobs"):
        TokenRecord([1], [2, 3], [-1.0])


def test_the_recorder_writes_records_and_a_resumed_run_appends_after_a_torn_line(tmp_path):
    folder = RunFolder.create(tmp_path / "run", {"harness": "rlm", "room": "x"})
    recorder = RunRecorder(folder)
    assert recorder.write_tokens("root/t1", None) is None  # a provider that records none
    ref = recorder.write_tokens("root/t1", TokenRecord([1, 2], [3], [-0.5]))
    recorder.event("model_call", **fields("model_call", tokens=ref))
    recorder.close()
    with open(folder.path / "tokens.jsonl", "a") as fh:
        fh.write('{"call_id": "root/t2", "prom')  # killed mid-write
    again = RunRecorder.reopen(folder, folder.events())
    ref2 = again.write_tokens("root/t2", TokenRecord([1, 2, 3], [4], [-0.1]))
    again.close()
    assert read_tokens(folder.path, folder.events()[0]["tokens"]).completion_ids == [3]
    assert read_tokens(folder.path, ref2).prompt_ids == [1, 2, 3]
    assert sorted(folder.tokens()) == ["root/t1", "root/t2"]
