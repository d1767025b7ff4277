import json
from pathlib import Path

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.models import ModelSpec, Prices, load_models_file, open_model, resolve_model_spec

GOOD = """
[models.gpt]
base_url = "https://api.example.com/v1/"
model = "gpt-x"
api_key_env = "DEALROOM_TEST_KEY"
context_window = 128000
price_input = 2.0
price_cached_input = 0.5
price_output = 8.0
concurrency = 300
timeout = 90
max_output_tokens = 4096

[models.vllm]
base_url = "http://127.0.0.1:8000/v1"
model = "qwen3-35b"
context_window = 32768
price_input = 0.1
"""


def write(tmp_path: Path, text: str, name: str = "models.toml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No models file in the working directory or the home directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_local_is_the_embedded_default():
    spec = resolve_model_spec("local")
    assert (spec.kind, spec.name, spec.context_window) == ("local", "local", 4096)


def test_scripted_resolves_for_the_root_only():
    assert resolve_model_spec("scripted", role="root").kind == "scripted"
    with pytest.raises(ConfigError, match="reserved for --root"):
        resolve_model_spec("scripted", role="sub")


def test_model_at_base_url():
    spec = resolve_model_spec("qwen3-35b@http://127.0.0.1:8000/v1/")
    assert spec.kind == "openai"
    assert spec.model == "qwen3-35b"
    assert spec.base_url == "http://127.0.0.1:8000/v1"
    assert spec.api_key_env == "OPENAI_API_KEY" and spec.api_key_optional
    assert spec.name == "qwen3-35b@http://127.0.0.1:8000/v1/"


@pytest.mark.parametrize("bad", ["@http://x/v1", "m@ftp://x", "m@", "m@127.0.0.1:8000"])
def test_bad_endpoint_specs_say_the_expected_form(bad):
    with pytest.raises(ConfigError, match="MODEL@BASE_URL"):
        resolve_model_spec(bad)


@pytest.mark.parametrize("bad", ["", "   "])
def test_empty_spec(bad):
    with pytest.raises(ConfigError, match="empty model spec"):
        resolve_model_spec(bad)


def test_unknown_role():
    with pytest.raises(ConfigError, match="unknown role"):
        resolve_model_spec("local", role="boss")


def test_unknown_name_without_a_models_file_says_where_it_looked(isolated):
    with pytest.raises(ConfigError) as err:
        resolve_model_spec("gpt")
    message = str(err.value)
    assert "./models.toml" in message and "~/.config/dealroom/models.toml" in message
    assert "[models.gpt]" in message and "MODEL@BASE_URL" in message


def test_name_from_the_models_file(tmp_path):
    spec = resolve_model_spec("gpt", models_file=write(tmp_path, GOOD))
    assert spec.kind == "openai" and spec.model == "gpt-x"
    assert spec.base_url == "https://api.example.com/v1"
    assert spec.prices == Prices(input=2.0, cached_input=0.5, output=8.0)
    assert (spec.concurrency, spec.timeout, spec.max_output_tokens) == (300, 90.0, 4096)
    assert spec.source == str(tmp_path / "models.toml")


def test_cached_price_defaults_to_the_input_price(tmp_path):
    spec = resolve_model_spec("vllm", models_file=write(tmp_path, GOOD))
    assert spec.prices == Prices(input=0.1, cached_input=0.1, output=0.0)
    assert spec.api_key_env is None and spec.concurrency == 64


def test_default_file_search_prefers_the_working_directory(isolated, monkeypatch):
    write(isolated / "home" / ".config" / "dealroom", GOOD.replace("gpt-x", "from-home"))
    assert resolve_model_spec("gpt").model == "from-home"
    write(isolated, GOOD.replace("gpt-x", "from-cwd"))
    assert resolve_model_spec("gpt").model == "from-cwd"


def test_unknown_name_lists_the_defined_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"defined: gpt, vllm"):
        resolve_model_spec("claude", models_file=write(tmp_path, GOOD))


def test_missing_models_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_model_spec("gpt", models_file=tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('base-url = "http://x/v1"\nmodel = "m"\ncontext_window = 1', "unknown key 'base-url'"),
        ('base_url = "http://x/v1"\ncontext_window = 8', "missing required key `model`"),
        ('model = "m"\ncontext_window = 8', "missing required key `base_url`"),
        ('base_url = "x/v1"\nmodel = "m"\ncontext_window = 8',
         "base_url must be an http:// or https:// URL such as http://127.0.0.1:8000/v1, got "
         "'x/v1'"),
        ('base_url = "http://x"\nmodel = "m"\ncontext_window = "8k"', "context_window must be"),
        ('base_url = "http://x"\nmodel = "m"\ncontext_window = 8\nprice_input = -1',
         "price_input must be a number of at least 0, got -1: USD per 1M tokens"),
        ('base_url = "http://x"\nmodel = "m"\ncontext_window = 8\nconcurrency = 0',
         r"concurrency must be an integer in \[1, 100000\], got 0"),
        ('base_url = "http://x"\nmodel = "m"\ncontext_window = 8\ntimeout = 0', "timeout"),
        (
            'base_url = "http://x"\nmodel = "m"\ncontext_window = 8\nmax_tokens_field = "n"',
            "max_tokens_field must be max_tokens or max_completion_tokens, got 'n'",
        ),
        ('base_url = "http://x"\nmodel = ""\ncontext_window = 8', "set `model`"),
    ],
)
def test_models_file_validation_names_the_problem(tmp_path, table, expected):
    path = write(tmp_path, f"[models.bad]\n{table}\n")
    with pytest.raises(ConfigError, match=expected) as err:
        load_models_file(path)
    assert "bad" in str(err.value)


def test_reserved_names_cannot_be_defined(tmp_path):
    path = write(
        tmp_path, '[models.local]\nbase_url = "http://x"\nmodel = "m"\ncontext_window = 8\n'
    )
    with pytest.raises(ConfigError, match="reserved"):
        load_models_file(path)


def test_invalid_toml_names_the_file(tmp_path):
    path = write(tmp_path, "[models.x\n")
    with pytest.raises(ConfigError, match="not valid TOML") as err:
        load_models_file(path)
    assert str(path) in str(err.value)


def test_stray_top_level_keys_are_rejected(tmp_path):
    with pytest.raises(ConfigError, match=r"\[models.NAME\]"):
        load_models_file(write(tmp_path, 'model = "x"\n'))


def test_spec_round_trips_through_json(tmp_path):
    spec = resolve_model_spec("gpt", models_file=write(tmp_path, GOOD))
    rebuilt = ModelSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert rebuilt == spec
    assert "DEALROOM_TEST_KEY" in json.dumps(spec.to_dict())  # the variable's name, not a key


def test_prices_are_cache_aware():
    prices = Prices(input=2.0, cached_input=0.5, output=8.0)
    assert prices.cost(1000, 600, 200) == pytest.approx((400 * 2 + 600 * 0.5 + 200 * 8) / 1e6)
    with pytest.raises(ConfigError):
        Prices(input=-1)


def test_missing_key_fails_fast_naming_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("DEALROOM_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="set the environment variable DEALROOM_TEST_KEY"):
        open_model("gpt", models_file=write(tmp_path, GOOD))


def test_concurrency_override(tmp_path, monkeypatch):
    monkeypatch.setenv("DEALROOM_TEST_KEY", "sk-test")
    client = open_model("gpt", models_file=write(tmp_path, GOOD), concurrency=500)
    assert client.spec.concurrency == 500
    assert client.name == "gpt" and client.model == "gpt-x" and client.context_window == 128000


def test_endpoint_spec_options_after_a_hash():
    spec = resolve_model_spec(
        "qwen@http://127.0.0.1:8000/v1#price_input=0.2,price_output=0.8,context_window=65536,"
        "stream=off,hedge=4,read_timeout=20"
    )
    assert spec.base_url == "http://127.0.0.1:8000/v1" and spec.model == "qwen"
    assert spec.prices == Prices(input=0.2, cached_input=0.2, output=0.8) and spec.priced
    assert spec.context_window == 65536 and spec.stream is False
    assert spec.hedge == 4.0 and spec.read_timeout == 20.0
    assert not resolve_model_spec("qwen@http://127.0.0.1:8000/v1").priced


def test_endpoint_spec_options_set_the_retries_and_their_back_off():
    spec = resolve_model_spec("qwen@http://127.0.0.1:8000/v1#max_retries=2,backoff_s=0.01")
    assert spec.max_retries == 2 and spec.backoff_s == 0.01
    plain = resolve_model_spec("qwen@http://127.0.0.1:8000/v1")
    assert (plain.max_retries, plain.backoff_s) == (4, 0.5)
    with pytest.raises(ConfigError, match="backoff_s"):
        resolve_model_spec("qwen@http://127.0.0.1:8000/v1#backoff_s=-1")


@pytest.mark.parametrize(
    "extra, expected",
    [("colour=red", "unknown option 'colour=red'"),
     ("stream=maybe", "stream must be true or false, got 'maybe'"),
     ("context_window=big", "context_window must be an integer, got 'big'"),
     ("price_input=-1", "price_input"),
     ("hedge=0.5", "hedge must be 0 (off) or a multiple >= 1"), ("timeout", "unknown option")],
)
def test_bad_spec_options_say_what_is_allowed(extra, expected):
    with pytest.raises(ConfigError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        resolve_model_spec(f"qwen@http://127.0.0.1:8000/v1#{extra}")


def test_models_file_prices_and_timeouts(tmp_path):
    path = write(tmp_path, GOOD + 'stream = false\nhedge = 0\nconnect_timeout = 3\n'
                 '\n[models.free]\nbase_url = "http://h/v1"\nmodel = "m"\ncontext_window = 8\n')
    specs = load_models_file(path)
    assert specs["gpt"].priced and specs["vllm"].priced and not specs["free"].priced
    assert specs["vllm"].stream is False and specs["vllm"].hedge == 0
    assert specs["vllm"].connect_timeout == 3.0 and specs["gpt"].stream is True
    with pytest.raises(ConfigError, match="stream must be true or false, got 'yes'"):
        load_models_file(write(tmp_path, GOOD + 'stream = "yes"\n', "bad.toml"))


def test_max_cost_is_refused_for_a_model_without_prices(tmp_path):
    from dealroom.models import require_prices

    path = write(tmp_path, GOOD + '\n[models.free]\nbase_url = "http://h/v1"\nmodel = "m"\n'
                 'context_window = 8\n')
    specs = load_models_file(path)
    require_prices([specs["gpt"], resolve_model_spec("local"),
                    resolve_model_spec("scripted", role="root")])
    with pytest.raises(ConfigError) as err:
        require_prices([resolve_model_spec("m@http://h/v1")])
    assert "m@http://h/v1#price_input=0.5,price_output=1.5" in str(err.value)
    with pytest.raises(ConfigError, match=r"Add price_input and price_output .* \[models.free\]"):
        require_prices([specs["free"]])
    require_prices([resolve_model_spec("m@http://h/v1#price_input=0,price_output=0")])


def test_calls_have_a_total_deadline_by_default_set_in_a_spec_or_a_models_file(tmp_path):
    from dealroom.models._spec import DEFAULT_DEADLINE_S

    plain = resolve_model_spec("qwen@http://127.0.0.1:8000/v1")
    assert plain.call_deadline == DEFAULT_DEADLINE_S == 300.0
    slow = resolve_model_spec("qwen@http://127.0.0.1:8000/v1#timeout=900")
    assert slow.call_deadline == 900.0, "a whole attempt always fits"
    assert resolve_model_spec("qwen@http://127.0.0.1:8000/v1#deadline=45").call_deadline == 45
    path = write(tmp_path, GOOD + "deadline = 0\n")
    assert load_models_file(path)["vllm"].call_deadline == 0.0, "0: no deadline"
    for bad in ("-1", "inf", "nan"):
        with pytest.raises(ConfigError, match="deadline must be a number of at least 0, got"):
            resolve_model_spec(f"qwen@http://127.0.0.1:8000/v1#deadline={bad}")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('timeout = "90s"', "timeout must be a number, got '90s'"),
        ("concurrency = true", "concurrency must be an integer, got True"),
        ("max_retries = 101", r"max_retries must be an integer in \[0, 100\], got 101"),
        ("options = 3", "options must be a table, got 3"),
        ("price_output = inf", "price_output must be a number of at least 0, got inf"),
    ],
)
def test_a_wrong_value_names_file_table_key_allowed_and_given(tmp_path, line, expected):
    path = write(tmp_path, GOOD + line + "\n")
    with pytest.raises(InputError, match=expected) as err:
        load_models_file(path)
    assert str(err.value).startswith(f"models file {path}, [models.vllm]: ")


def test_the_models_file_schema_is_the_table_load_models_file_validates():
    from dealroom.cli._schemas import CONTRACTS, schema
    from dealroom.models import ModelEntry

    table = schema(CONTRACTS["models-file"])
    assert table["additionalProperties"] is False
    assert table["properties"]["concurrency"]["maximum"] == 100_000
    assert table["properties"]["max_tokens_field"]["anyOf"][0]["enum"] == [
        "max_tokens", "max_completion_tokens"]
    assert "USD" in table["properties"]["price_input"]["description"]
    entry = ModelEntry(base_url="http://h/v1", model="m", context_window=8, price_input=0.5)
    spec = entry.to_spec("m", source=Path("/x/models.toml"))
    assert spec.priced and spec.prices == Prices(input=0.5, cached_input=0.5)
    assert spec.source == "/x/models.toml" and spec.concurrency == 64


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"context_window": 0}, "context_window must be an integer of at least 1, got 0"),
        ({"timeout": "90"}, "timeout must be a number, got '90'"),
        ({"concurrency": True}, "concurrency must be an integer, got True"),
        ({"max_retries": -1}, r"max_retries must be an integer in \[0, 100\], got -1"),
        ({"read_timeout": float("inf")}, "read_timeout must be a positive finite number, got inf"),
        ({"colour": "red"}, "unknown key 'colour'; the keys are name, kind, model"),
    ],
)
def test_a_spec_is_checked_by_its_schema_when_built_and_when_replaced(changes, expected):
    spec = resolve_model_spec("qwen@http://127.0.0.1:8000/v1")
    with pytest.raises(InputError, match=rf"^model 'qwen@http://127.0.0.1:8000/v1': {expected}"):
        spec.replace(**changes)
    with pytest.raises(InputError, match=expected):
        ModelSpec(name="m", kind="openai", model="m", base_url="http://h/v1", **changes)


def test_replace_is_a_validated_copy():
    spec = resolve_model_spec("qwen@http://127.0.0.1:8000/v1#price_input=1,price_output=2")
    copy = spec.replace(stream=False, base_url="http://other:9/v1/")
    assert copy.stream is False and copy.base_url == "http://other:9/v1"
    assert (copy.prices, copy.priced, copy.name) == (spec.prices, True, spec.name)
    assert spec.stream is True, "the spec itself is frozen"
    assert spec.with_concurrency(None) is spec and spec.with_concurrency(7).concurrency == 7
    with pytest.raises(InputError, match=r"concurrency must be an integer in \[1, 100000\]"):
        spec.with_concurrency(0)
    assert Prices(2.0, 0.5, 8.0) == Prices(input=2.0, cached_input=0.5, output=8.0)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [("concurrency=0", r"concurrency must be an integer in \[1, 100000\], got '0'"),
     ("deadline=abc", "deadline must be a number, got 'abc'"),
     ("max_output_tokens=0", "max_output_tokens must be an integer of at least 1, got '0'"),
     ("tokens=perhaps", "tokens must be true or false, got 'perhaps'")],
)
def test_spec_options_are_typed_and_bounded_by_the_models_file_schema(extra, expected):
    with pytest.raises(InputError, match=expected):
        resolve_model_spec(f"qwen@http://127.0.0.1:8000/v1#{extra}")
    spec = resolve_model_spec("qwen@http://127.0.0.1:8000/v1#tokens=yes,max_output_tokens=64")
    assert spec.tokens is True and spec.max_output_tokens == 64
