"""The redactor: known secrets out of every write point, in every form JSON gives them; short
strings left alone."""

import json
import logging

import pytest

from dealroom._util.files import write_bytes_atomic, write_json_atomic, write_text_atomic
from dealroom._util.redact import MARKER, MIN_SECRET_CHARS, SECRETS, Secrets, add_secret, logger
from dealroom.runs import RunFolder, RunRecorder, append_jsonl

KEY = "sk-live-Zx81b02c"


def test_a_secret_is_redacted_as_written_and_as_json_escapes_it():
    secrets = Secrets()
    odd = 'pa"ss\\wörd-42'
    secrets.add(KEY)
    secrets.add(odd)
    text = f"Bearer {KEY}; {json.dumps(odd)}; {json.dumps(odd, ensure_ascii=False)}; {odd}"
    assert secrets.redact(text) == f'Bearer {MARKER}; "{MARKER}"; "{MARKER}"; {MARKER}'
    assert secrets.redact_bytes(f"x{KEY}y".encode()) == f"x{MARKER}y".encode()
    value = {KEY: [f"a {KEY}", 3, None, (KEY,)], "n": 1.5}
    assert secrets.redact_value(value) == {MARKER: [f"a {MARKER}", 3, None, [MARKER]], "n": 1.5}


@pytest.mark.parametrize("short", ["", " ", "a", "abc", "EMPTY", "none",
                                   "x" * (MIN_SECRET_CHARS - 1), " " * 20, None])
def test_short_strings_and_placeholder_keys_are_never_redacted(short):
    secrets = Secrets()
    secrets.add(short)
    text = "none of the EMPTY keys abc xxxxxxx"
    assert not secrets and secrets.redact(text) == text
    assert secrets.redact_value({"a": text}) == {"a": text}


def test_every_write_point_leaves_the_secret_out(tmp_path):
    add_secret(KEY)
    write_text_atomic(tmp_path / "memo.md", f"key {KEY}")
    write_bytes_atomic(tmp_path / "raw.bin", f"key {KEY}".encode())
    write_json_atomic(tmp_path / "config.json", {"why": f"key {KEY}", KEY: 1})
    append_jsonl(tmp_path / "log.jsonl", {"why": f"key {KEY}"})
    recorder = RunRecorder(RunFolder.create(tmp_path / "run", {"harness": "rlm"}))
    event = recorder.event("cell", turn=1, code=f"print('{KEY}')", output=KEY, error=None,
                           timed_out=False, crashed=False, seconds=0.1)
    recorder.memo_turn(1, f"# Memo\n\nkey {KEY}\n")
    recorder.close()
    assert event["output"] == MARKER and recorder.written == [event]
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    for path in [p for p in written if p != tmp_path / "run" / "config.json"]:  # no secret
        data = path.read_text()
        assert KEY not in data and MARKER in data, path
    assert json.loads((tmp_path / "config.json").read_text()) == {"why": f"key {MARKER}",
                                                                   MARKER: 1}


def test_dealroom_loggers_redact_their_messages(caplog):
    log = logger("dealroom.test-redact")
    add_secret(KEY)
    with caplog.at_level(logging.WARNING, logger="dealroom.test-redact"):
        log.warning("the endpoint said %s", f"Authorization: Bearer {KEY}")
    assert caplog.messages == [f"the endpoint said Authorization: Bearer {MARKER}"]
    assert logger("dealroom.test-redact") is log and len(log.filters) == 1


def test_the_secrets_of_a_spec_are_known_once_it_is_resolved(tmp_path, monkeypatch):
    from dealroom.models import resolve_model_spec

    monkeypatch.setenv("CORP_KEY", "sk-corp-0123456789")
    monkeypatch.setenv("ORG_TOKEN", "org-9876543210")
    monkeypatch.setenv("HTTPS_PROXY", "http://alice:pr%40xy-pass@proxy.corp:3128")
    path = tmp_path / "models.toml"
    path.write_text('[models.corp]\nbase_url = "https://bob:url-pass-77@llm.corp/v1"\n'
                    'model = "m"\ncontext_window = 8192\napi_key_env = "CORP_KEY"\n'
                    'proxy = "http://carol:spec-proxy-pass@proxy2.corp:3128"\n'
                    'headers = {X-Org = "Token ${ORG_TOKEN}", X-Team = "team-literal-1"}\n')
    assert not SECRETS
    resolve_model_spec("corp", models_file=path)
    text = ("sk-corp-0123456789 org-9876543210 pr@xy-pass pr%40xy-pass url-pass-77 "
            "spec-proxy-pass team-literal-1 Token org-9876543210")
    assert SECRETS.redact(text) == " ".join([MARKER] * 8)  # the whole header value is one
