"""The public surface is declared in one place: each package's ``__all__``."""

import importlib
import subprocess
import sys
import types

import pytest

import dealroom

PACKAGES = ["dealroom.runs", "dealroom.room", "dealroom.models", "dealroom.harness",
            "dealroom.harness.rlm", "dealroom.harness.sandbox", "dealroom.harness.toolloop",
            "dealroom.judge", "dealroom.measure", "dealroom.eval", "dealroom.report",
            "dealroom.train"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_names(name):
    pkg = importlib.import_module(name)
    public = {n for n, v in vars(pkg).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(pkg.__all__)


def test_top_level_exports_are_the_objects_of_their_packages_loaded_lazily():
    code = "import sys, dealroom; print(sorted(m for m in sys.modules if m.startswith('dealroom')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['dealroom']"
    for name, module in dealroom._EXPORTS.items():
        assert getattr(dealroom, name) is getattr(importlib.import_module(module), name), name
    assert sorted(dealroom.__all__) == sorted(dealroom._EXPORTS)
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        dealroom.no_such_thing  # noqa: B018
