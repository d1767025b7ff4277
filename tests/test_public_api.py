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


LAZY = ["dealroom.room", "dealroom.harness", "dealroom.harness.rlm", "dealroom.harness.sandbox"]
"""Packages whose public names load on first use (``dealroom._util.lazy``)."""


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_names(name):
    pkg = importlib.import_module(name)
    if name in LAZY:
        assert sorted(pkg.__all__) == sorted(pkg._EXPORTS)
        for public, target in pkg._EXPORTS.items():
            module, _, attr = target.partition(":")
            assert module.startswith(name + "."), (public, module)
            value = getattr(importlib.import_module(module), attr or public)
            assert getattr(pkg, public) is value and not isinstance(value, types.ModuleType)
        assert set(pkg.__all__) <= set(dir(pkg))
        with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
            pkg.no_such_thing  # noqa: B018
        return
    public = {n for n, v in vars(pkg).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(pkg.__all__)


def test_the_sandboxed_worker_imports_only_what_its_repl_needs():
    code = ("import sys, dealroom.harness.rlm._boot, dealroom.harness.sandbox._worker, "
            "dealroom.room._store; print(sorted(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    for heavy in ("aiohttp", "dealroom.room._generate", "dealroom.room._ingest",
                  "dealroom.models", "dealroom.harness._api", "dealroom.harness.rlm._engine",
                  "pydantic", "asyncio", "dealroom.harness.sandbox._process"):
        assert f"'{heavy}'" not in out, f"{heavy} is imported by the worker"


def test_top_level_exports_are_the_objects_of_their_packages_loaded_lazily():
    code = "import sys, dealroom; print(sorted(m for m in sys.modules if m.startswith('dealroom')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['dealroom']"
    for name, module in dealroom._EXPORTS.items():
        assert getattr(dealroom, name) is getattr(importlib.import_module(module), name), name
    assert sorted(dealroom.__all__) == sorted(dealroom._EXPORTS)
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        dealroom.no_such_thing  # noqa: B018


def test_the_cli_and_every_package_import_without_the_optional_extras():
    """A machine without ray, skyrl-gym, matplotlib or inspect-ai still runs every command that
    needs none of them (each optional import is deferred to the feature that uses it)."""
    code = ("import sys\n"
            "class Missing:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in {'ray', 'skyrl_gym', 'matplotlib', 'inspect_ai'}:\n"
            "            raise ImportError(f'no {name} here')\n"
            "sys.meta_path.insert(0, Missing())\n"
            "import dealroom.cli, dealroom.train, dealroom.eval, dealroom.report\n"
            "from dealroom.cli import app\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
