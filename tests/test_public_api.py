"""The public surface is declared in one place: each package's ``__all__``."""

import importlib
import types

import pytest

import dealroom

PACKAGES = ["dealroom.room", "dealroom.models", "dealroom.harness", "dealroom.harness.rlm",
            "dealroom.harness.sandbox", "dealroom.harness.toolloop", "dealroom.judge",
            "dealroom.measure", "dealroom.eval", "dealroom.train"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_names(name):
    pkg = importlib.import_module(name)
    public = {n for n, v in vars(pkg).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(pkg.__all__)


def test_top_level_exports_resolve_lazily():
    for name in dealroom.__all__:
        assert callable(getattr(dealroom, name)), name
    with pytest.raises(AttributeError):
        dealroom.no_such_thing  # noqa: B018
