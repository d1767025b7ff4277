"""``model_record``: which endpoint and model a spec or client is, without a secret."""

import json

from dealroom.models import ModelSpec, model_change, model_record, resolve_model_spec


def test_the_route_is_the_proxy_without_its_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://bob:hunter2@10.0.0.9:8080")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    (tmp_path / "ca.pem").write_text("not read here")
    path = tmp_path / "models.toml"
    path.write_text('[models.corp]\nbase_url = "http://10.1.2.3:8000/v1"\nmodel = "qwen"\n'
                    'proxy = "http://alice:s3cret@127.0.0.1:3128"\nca_bundle = "ca.pem"\n'
                    'headers = { X-Org = "${ORG}", X-Team = "deals" }\n')
    record = model_record(resolve_model_spec("corp", models_file=path))
    assert (record["route"], record["route_from"]) == ("http://127.0.0.1:3128", "proxy")
    assert record["tls"] == ["ca_bundle"] and record["headers"] == ["X-Org", "X-Team"]
    assert record["server"] is None and record["context_window_from"] == "default"
    text = json.dumps(record)
    assert "s3cret" not in text and "alice" not in text and "deals" not in text
    by_env = model_record(resolve_model_spec("m@http://10.1.2.3:8000/v1#context_window=9000"))
    assert (by_env["route"], by_env["route_from"]) == ("http://10.0.0.9:8080", "HTTP_PROXY")
    assert (by_env["context_window"], by_env["context_window_from"]) == (9000, "spec")
    assert "hunter2" not in json.dumps(by_env)


def test_a_change_is_another_base_url_or_model_id():
    spec = ModelSpec(name="a", kind="openai", model="m", base_url="http://h:1/v1")
    now = model_record(spec)
    assert model_change(now, now) is None
    assert model_change({"name": "a", "prices": {}}, now) is None  # a version-1 record
    moved = model_record(spec.replace(base_url="http://h:2/v1", model="n"))
    assert model_change(now, moved) == ("base_url 'http://h:1/v1' → 'http://h:2/v1', "
                                        "model 'm' → 'n'")
