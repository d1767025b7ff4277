"""The Harness contract: both built-ins satisfy it, and a plug-in registers through the hook."""

import inspect
import json
import textwrap

import pytest

from dealroom.errors import ConfigError
from dealroom.harness import Harness, get_harness, harness_names, run_agent

PLUGIN = '''
from dataclasses import dataclass
from dealroom.harness import open_run

@dataclass
class EchoSettings:
    greeting: str = "hello"

class Echo:
    name = "echo"
    settings = EchoSettings
    uses_sub = False

    def scripted_root(self):
        from dealroom.models import ScriptedModel
        return ScriptedModel(["unused"])

    async def run(self, room_dir, out, *, root, sub, settings, listeners=(), concurrency=None):
        run = await open_run("echo", room_dir, out, root=root, settings=settings,
                             listeners=listeners, concurrency=concurrency)
        run.deliverables.write_memo(f"# {settings.greeting}\\n")
        run.events.emit("run_end", status="submitted", reason="echo", turns=0)
        return run.finish("submitted", "echo", 0)

    async def resume(self, run_dir, *, root, sub, listeners=()):
        raise NotImplementedError

HARNESS = Echo()
NOT_A_HARNESS = object()
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "fake_dealroom_harness.py").write_text(PLUGIN)
    dist = tmp_path / "fake_dealroom_harness-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-dealroom-harness\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent("""
        [dealroom.harnesses]
        echo = fake_dealroom_harness:HARNESS
        odd = fake_dealroom_harness:NOT_A_HARNESS
        rlm = fake_dealroom_harness:HARNESS
    """))
    monkeypatch.syspath_prepend(str(tmp_path))


def _parameters(function):
    return [p for p in inspect.signature(function).parameters.values() if p.name != "self"]


@pytest.mark.parametrize("name", ["rlm", "toolloop"])
def test_both_harnesses_satisfy_the_protocol(name):
    harness = get_harness(name)
    assert isinstance(harness, Harness)
    assert harness.name == name and isinstance(harness.uses_sub, bool)
    assert "max_turns" in harness.settings.__dataclass_fields__
    for method in ("run", "resume", "scripted_root"):
        got, wanted = _parameters(getattr(harness, method)), _parameters(getattr(Harness, method))
        assert [(p.name, p.kind) for p in got] == [(p.name, p.kind) for p in wanted], method
        for mine, spec in zip(got, wanted, strict=True):  # optional in the protocol: same default
            assert spec.default is inspect.Parameter.empty or mine.default == spec.default
        is_async = inspect.iscoroutinefunction(getattr(Harness, method))
        assert inspect.iscoroutinefunction(getattr(harness, method)) == is_async, method


def test_a_third_party_harness_runs_through_the_same_hook(plugin, small_room, tmp_path):
    assert {"echo", "rlm", "toolloop"} <= set(harness_names())
    assert get_harness("rlm").name == "rlm"  # a plug-in cannot take over a built-in name
    result = run_agent(small_room, tmp_path / "run", harness="echo", root="scripted",
                       greeting="hi there")
    assert result.status == "submitted"
    assert (tmp_path / "run" / "output" / "memo.md").read_text() == "# hi there\n"
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["harness"] == "echo" and config["settings"] == {"greeting": "hi there"}
    assert result.metrics["coverage"]["coverage"] == 0.0 and result.metrics["events"] == 2


def test_registry_errors_name_the_problem(plugin):
    with pytest.raises(ConfigError, match="unknown harness 'nope': choose one of echo, odd, rlm"):
        get_harness("nope")
    with pytest.raises(ConfigError, match="does not provide the Harness protocol"):
        get_harness("odd")
    with pytest.raises(ConfigError, match=r"greeting does not apply to the rlm harness"):
        run_agent("room", "out", harness="rlm", greeting="x")
