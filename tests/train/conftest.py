"""Fixtures of the training tests."""

import pytest


@pytest.fixture
def lora_policy(tiny_model_dir):
    """``lora_policy(scale=0.05, seed=0)``: the tiny model under a fresh LoRA adapter (r 4, all
    linear layers, no dropout) whose B matrices start at N(0, scale) rather than zero, so the
    adapter changes the model from the first step."""

    def make(scale=0.05, seed=0):
        import torch
        from peft import LoraConfig, get_peft_model

        from dealroom.models import load_hf_model

        torch.manual_seed(seed)
        model = get_peft_model(load_hf_model(f"hf:{tiny_model_dir}").model, LoraConfig(
            r=4, lora_alpha=8, target_modules="all-linear", lora_dropout=0.0))
        with torch.no_grad():
            for name, p in model.named_parameters():
                if "lora_B" in name:
                    p.normal_(0, scale)
        return model

    return make
