"""Helpers for testing code built on dealroom: stand-ins for model servers, a scripted model,
a tiny model built in code. Install the ``dev`` extra (the tiny model needs ``train`` too).

    MockOpenAIServer   an OpenAI-compatible server on loopback that behaves as served models do
                       (reasoning, length refusals, prose around code, cut-off replies, faults)
    ServedModelServer  the same shaped like vLLM (token ids, logprobs, its errors); Completion
    LlamaCppServer     llama-cpp-python's real OpenAI server with the embedded SmolLM2 GGUF, or
                       a copy whose chat template opens <think>; gbnf_literal for its grammars
    Fault, MALFORMED, random_faults, echo, chat_completion_body   what a reply or fault is
    ScriptedModel      an in-process client replaying a script of replies
    LoopbackServer     the base of the loopback servers (start, stop, base_url, spec)
    tiny_model, tiny_tokenizer   a 2-layer causal LM and its tokenizer, written in seconds
    LoraServer, vllm_completion  a stand-in for vLLM with runtime LoRA loading over a tiny model
    serve(argv)        run the mock server until interrupted (``python -m dealroom.testing``)

Run the mock server as a process with ``python -m dealroom.testing --latency 0.2`` (it prints
its base URL). Names load on first use, so importing this module costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dealroom._util.lazy import lazy_exports

_EXPORTS = {
    "Completion": "dealroom.models._served",
    "ServedModelServer": "dealroom.models._served",
    "smollm2_count": "dealroom.models._served",
    "words_count": "dealroom.models._served",
    "MALFORMED": "dealroom.models._mock",
    "Fault": "dealroom.models._mock",
    "MockOpenAIServer": "dealroom.models._mock",
    "chat_completion_body": "dealroom.models._mock",
    "echo": "dealroom.models._mock",
    "random_faults": "dealroom.models._mock",
    "serve": "dealroom.models._mock:main",
    "LoopbackServer": "dealroom.models._loopback",
    "LlamaCppServer": "dealroom.models._llamacpp",
    "gbnf_literal": "dealroom.models._llamacpp",
    "ScriptedModel": "dealroom.models._scripted",
    "CHAT_TEMPLATE": "dealroom.train._tiny",
    "LoraServer": "dealroom.train._tiny",
    "tiny_model": "dealroom.train._tiny",
    "tiny_tokenizer": "dealroom.train._tiny",
    "vllm_completion": "dealroom.train._tiny",
}
"""Public name → the module that defines it."""

if TYPE_CHECKING:  # what type checkers and editors see (a test keeps it to _EXPORTS)
    from dealroom.models._llamacpp import LlamaCppServer, gbnf_literal
    from dealroom.models._loopback import LoopbackServer
    from dealroom.models._mock import (
        MALFORMED,
        Fault,
        MockOpenAIServer,
        chat_completion_body,
        echo,
        random_faults,
    )
    from dealroom.models._mock import main as serve
    from dealroom.models._scripted import ScriptedModel
    from dealroom.models._served import Completion, ServedModelServer, smollm2_count, words_count
    from dealroom.train._tiny import (
        CHAT_TEMPLATE,
        LoraServer,
        tiny_model,
        tiny_tokenizer,
        vllm_completion,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if __name__ == "__main__":
    from dealroom.models._mock import main as serve_forever

    serve_forever()
