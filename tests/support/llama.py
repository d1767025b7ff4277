"""llama-cpp-python's real OpenAI server for the tests (``dealroom.testing.LlamaCppServer``):
the fixtures ``llama_server`` (the embedded SmolLM2 GGUF) and ``llama_think_server`` (a copy
whose chat template opens ``<think>``), one each per test session, skipped with the reason
when the ``local`` extra (or, for the copy, the ``gguf`` package) is not installed.

Grammars (GBNF, llama.cpp's ``grammar``) force the reply shapes the tests need from a 135M
model; prompts are tiny and ``max_tokens`` small, so each call takes well under a second.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from dealroom.errors import MissingDependency

DRAFT = 'Plan: a first draft.\n```python\nprint("DRAFT_IN_THINK_RAN")\n```\nThe data room is ready'
"""Reasoning that drafts code: it must never run (issue 36)."""


def draft_grammar(closing: str = "") -> str:
    """GBNF for :data:`DRAFT` followed by endless words (so ``max_tokens`` cuts it inside the
    reasoning), or, with ``closing``, by ``</think>`` and ``closing`` (a finished reply)."""
    from dealroom.testing import gbnf_literal

    if closing:
        return f"root ::= {gbnf_literal(DRAFT + '.</think>' + closing)}"
    return f'root ::= {gbnf_literal(DRAFT)} ( " and" | " then" | " more" | " so" )+'


def need_llama() -> None:
    """Skip the test when llama-cpp-python is not installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python (the `local` extra) is not installed: no real server")


def _start(**options) -> Iterator:
    from dealroom.testing import LlamaCppServer

    try:
        server = LlamaCppServer(**options).start()
    except MissingDependency as exc:
        pytest.skip(f"no real llama.cpp server: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama_server() -> Iterator:
    """llama-cpp-python's OpenAI server with the embedded SmolLM2 GGUF (n_ctx 2048)."""
    need_llama()
    yield from _start()


@pytest.fixture(scope="session")
def llama_think_server(tmp_path_factory) -> Iterator:
    """The same with a copy of the GGUF whose chat template opens ``<think>``."""
    need_llama()
    if importlib.util.find_spec("gguf") is None:
        pytest.skip("the gguf package (the `train` extra) is not installed: no re-templated "
                    "GGUF")
    folder: Path = tmp_path_factory.mktemp("gguf")
    yield from _start(think=True, folder=folder)
