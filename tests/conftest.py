"""Shared fixtures."""

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A tiny chat model written to disk (dealroom.train.testing): ``hf:PATH`` loads it."""
    pytest.importorskip("torch")
    import torch

    from dealroom.train.testing import tiny_model

    torch.set_num_threads(2)
    return tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir, local_files_only=True)
