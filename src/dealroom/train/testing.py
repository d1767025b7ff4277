"""A tiny chat model built in code, for tests and examples: no download, loads in a second.

``tiny_model(folder)`` writes a 2-layer Llama with a byte-level BPE tokenizer and a ChatML
template whose ``{% generation %}`` markers make the assistant mask, then returns the folder:
``hf:FOLDER`` loads it through the same path as any model.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{% if message['role'] == 'assistant' %}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}{{ '\\n' }}"
    "{% else %}{{ message['content'] + '<|im_end|>\\n' }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
CORPUS = [
    "You are the lead associate on an M&A due diligence review.",
    "Turn 2 of 8. Output:\nD00001 Share Purchase Agreement 12 pages",
    "```python\nprint(room.tree())\nhits = room.grep('change of control')\n```",
    "results = llm_batch([{'prompt': 'List obligations', 'docs': [d.id]} for d in room.docs])",
    "memo.finding('Contracts', 'Change of control', 'Consent needed [D00042 p.3]')\nsubmit()",
]


def tiny_tokenizer(vocab_size: int = 384):  # type: ignore[no-untyped-def]
    """A byte-level BPE tokenizer (any text round-trips) with ChatML special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    core.train_from_iterator(CORPUS * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", bos_token="<|im_start|>",
                                        unk_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(folder: Path, *, seed: int = 0, layers: int = 2, hidden: int = 32) -> Path:
    """Write a tiny Llama chat model (weights, config, tokenizer) to ``folder``; return it."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=8192, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    folder = Path(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
