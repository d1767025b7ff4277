"""LlamaCppServer: llama-cpp-python's real OpenAI server on loopback, for tests and
benchmarks (exported by ``dealroom.testing``).

It serves the SmolLM2 GGUF that ``local`` ships, as it is, or (``think=True``) a copy whose
chat template opens ``<think>`` at the end of the generation prompt, as DeepSeek-R1's current
template and Qwen3 thinking models do when served without a reasoning parser: its replies
then come as ``R</think>A``, or ``R`` alone when cut at their cap. The copy is written once
with the ``gguf`` package's metadata writer (``gguf_new_metadata --chat-template``). A GBNF
grammar (llama.cpp's ``grammar`` in the request body; :meth:`LlamaCppServer.spec`) forces a
reply's shape, so a test gets the shape it needs from a 135M model.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from dealroom.errors import MissingDependency
from dealroom.models._local import LocalServer, model_path
from dealroom.models._spec import LOCAL_MODEL, ModelSpec, resolve_model_spec

THINK_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}"
)
"""SmolLM2's ChatML, with a generation prompt that opens ``<think>``."""
N_CTX = 2048


def think_gguf(folder: Path, source: Path | None = None) -> Path:
    """A copy of the GGUF (default: the embedded SmolLM2) in ``folder`` whose chat template is
    :data:`THINK_TEMPLATE`; written once (needs the ``gguf`` package, the ``train`` extra)."""
    if importlib.util.find_spec("gguf") is None:
        raise MissingDependency("gguf", extra="train", feature="a re-templated GGUF")
    source = source or model_path()
    target = Path(folder) / f"{source.stem}.think.gguf"
    if target.is_file():
        return target
    partial = target.with_suffix(".part")
    done = subprocess.run(
        [sys.executable, "-m", "gguf.scripts.gguf_new_metadata", str(source), str(partial),
         "--chat-template", THINK_TEMPLATE, "--force"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not partial.is_file():
        raise RuntimeError(f"gguf_new_metadata failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout)[-2000:]}")
    partial.replace(target)
    return target


class LlamaCppServer(LocalServer):
    """llama-cpp-python's OpenAI server on 127.0.0.1 (``start()``/``stop()`` or ``with``),
    serving the SmolLM2 GGUF, or with ``think=True`` its copy whose template opens
    ``<think>``, written to ``folder`` (default: a temporary folder, removed by ``stop()``)."""

    def __init__(self, *, think: bool = False, folder: Path | None = None,
                 n_ctx: int = N_CTX, model: Path | None = None) -> None:
        super().__init__(model, n_ctx=n_ctx)
        self.think = think
        self.folder = folder
        self._made: Path | None = None

    def start(self) -> LlamaCppServer:
        if self.think and self.model is None:
            if self.folder is None:
                self._made = self.folder = Path(tempfile.mkdtemp(prefix="dealroom-gguf-"))
            self.model = think_gguf(self.folder)
        super().start()
        return self

    def stop(self) -> None:
        super().stop()
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            self._made = self.folder = self.model = None

    def spec(self, grammar: str | None = None, options: str = "", **changes: Any) -> ModelSpec:
        """The spec of a client of this server (``MODEL@BASE_URL#options``), with ``grammar``
        (GBNF) sent in every request and ``changes`` to its fields."""
        spec = resolve_model_spec(f"{LOCAL_MODEL}@{self.base_url}"
                                  + (f"#{options}" if options else ""))
        changes.setdefault("proxy", "")  # a server on loopback: never through a proxy
        if grammar is not None:
            extra = {**spec.options.get("extra_body", {}), "grammar": grammar}
            changes["options"] = {**spec.options, **changes.get("options", {}),
                                  "extra_body": extra}
        return spec.replace(**changes)


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal.

    >>> gbnf_literal('say "hi"\\n')
    '"say \\\\"hi\\\\"\\\\n"'
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
