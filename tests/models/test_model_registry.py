import asyncio
import textwrap

import pytest

from dealroom.errors import ConfigError, DealroomError
from dealroom.models import ModelSpec, ScriptedModel, open_model, provider_names
from dealroom.models._registry import get_provider

PLUGIN = """
from dealroom.models import ScriptedModel

def create(spec):
    return ScriptedModel([f"plugin says {spec.options.get('greeting', 'hi')}"], name=spec.name,
                         model=spec.model)

def broken(spec):
    return object()
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed distribution declaring providers in the dealroom.providers group."""
    (tmp_path / "fake_dealroom_provider.py").write_text(PLUGIN)
    dist = tmp_path / "fake_dealroom_provider-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-dealroom-provider\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        textwrap.dedent("""
        [dealroom.providers]
        fake = fake_dealroom_provider:create
        broken = fake_dealroom_provider:broken
        missing = no_such_module_anywhere:create
        openai = fake_dealroom_provider:create
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    models = tmp_path / "models.toml"
    models.write_text(
        '[models.f]\nprovider = "fake"\nmodel = "m1"\n'
        '[models.f.options]\ngreeting = "hello"\n'
        '[models.b]\nprovider = "broken"\nmodel = "m"\n'
        '[models.n]\nprovider = "missing"\nmodel = "m"\n'
        '[models.u]\nprovider = "nobody"\nmodel = "m"\n'
    )
    return models


def test_builtins_are_registered():
    assert {"openai", "local"} <= set(provider_names())


def test_third_party_provider_through_the_entry_point_hook(plugin):
    assert "fake" in provider_names()
    client = open_model("f", models_file=plugin)
    assert isinstance(client, ScriptedModel) and client.name == "f" and client.model == "m1"
    result = asyncio.run(client.chat([{"role": "user", "content": "x"}]))
    assert result.text == "plugin says hello"


def test_a_plugin_cannot_take_over_a_builtin_name(plugin):
    assert get_provider("openai").__module__ == "dealroom.models._client"


def test_unknown_provider_lists_the_known_ones(plugin):
    with pytest.raises(ConfigError, match=r"unknown model provider 'nobody'.*fake.*local"):
        open_model("u", models_file=plugin)


def test_provider_that_fails_to_import(plugin):
    with pytest.raises(ConfigError, match="could not be imported"):
        open_model("n", models_file=plugin)


def test_provider_returning_a_non_client(plugin):
    with pytest.raises(DealroomError, match="not a ModelClient"):
        open_model("b", models_file=plugin)


def test_scripted_is_left_to_the_harness():
    with pytest.raises(ConfigError, match="harness builds itself"):
        open_model("scripted", role="root")


def test_a_run_log_record_reopens_the_same_model():
    record = ModelSpec(
        name="m@http://127.0.0.1:9/v1",
        kind="openai",
        model="m",
        base_url="http://127.0.0.1:9/v1",
        concurrency=7,
    ).to_dict()
    client = open_model(ModelSpec.from_dict(record))
    assert client.spec.to_dict() == record and client.base_url == "http://127.0.0.1:9/v1"
