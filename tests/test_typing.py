"""The package is typed for its users: py.typed ships, and the lazy API is typed."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "dealroom"
LAZY = [p for p in SRC.rglob("*.py") if "_EXPORTS = {" in p.read_text(encoding="utf-8")]


def exports_and_typed_imports(init: Path) -> tuple[dict[str, str], dict[str, str]]:
    """``_EXPORTS`` of a lazy package, and what its ``if TYPE_CHECKING:`` block imports (in the
    same ``name → module[:attr]`` form)."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    exports: dict[str, str] = {}
    typed: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_EXPORTS":
            exports = ast.literal_eval(node.value)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom), ast.dump(imp)
                for alias in imp.names:
                    name = alias.asname or alias.name
                    typed[name] = imp.module + (f":{alias.name}" if alias.asname else "")
    return exports, typed


def test_the_lazy_packages_are_found() -> None:
    assert {p.parent.name for p in LAZY if p.name == "__init__.py"} >= {
        "dealroom", "room", "harness", "rlm"}
    assert SRC / "testing.py" in LAZY


@pytest.mark.parametrize("init", LAZY, ids=lambda p: str(p.relative_to(SRC.parent)))
def test_every_lazy_name_is_imported_for_type_checkers(init: Path) -> None:
    exports, typed = exports_and_typed_imports(init)
    assert typed == exports, "regenerate the TYPE_CHECKING block from _EXPORTS"


def test_the_typed_marker_ships() -> None:
    assert (SRC / "py.typed").is_file()
    assert '"dealroom" = ["py.typed"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_exports_block_sees_a_drifted_name(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("_EXPORTS = {'a': 'm', 'b': 'n:c'}\nif TYPE_CHECKING:\n"
                    "    from m import a\n    from n import c as b\n    from n import d\n")
    exports, typed = exports_and_typed_imports(init)
    assert typed == {**exports, "d": "n"}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mypy") is None, reason="mypy comes with the dev extra")
def test_the_checker_sees_the_lazy_api_typed(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import dealroom\nreveal_type(dealroom.run_agent)\n"
                     "reveal_type(dealroom.Room)\n")
    config = str(ROOT / "pyproject.toml")
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", config,
                          str(probe)], capture_output=True, text=True, cwd=tmp_path,
                         env={"MYPYPATH": str(SRC.parent), "PATH": "/usr/bin:/bin"}, check=False)
    revealed = [line for line in out.stdout.splitlines() if "Revealed type" in line]
    assert len(revealed) == 2, out.stdout + out.stderr
    assert all('"Any"' not in line for line in revealed), revealed
    assert "RunResult" in revealed[0]


def test_every_test_helper_loads_from_dealroom_testing() -> None:
    import dealroom.testing as testing

    for name in testing.__all__:
        assert getattr(testing, name) is not None, name
    for gone in ("dealroom.models.testing", "dealroom.train.testing", "dealroom.report.testing"):
        with pytest.raises(ModuleNotFoundError):
            __import__(gone)


CORE_IMPORTS = {"typer": "typer", "rich": "rich", "aiohttp": "aiohttp", "numpy": "numpy",
                "pypdf": "pypdf", "python-docx": "docx", "markdown-it-py": "markdown_it",
                "openpyxl": "openpyxl", "python-pptx": "pptx", "beautifulsoup4": "bs4",
                "extract-msg": "extract_msg", "google-re2": "re2", "packaging": "packaging",
                "orjson": "orjson", "yarl": "yarl", "pydantic": "pydantic",
                "jsonschema": "jsonschema"}


def test_a_plain_install_brings_nothing_only_test_support_uses() -> None:
    """Every core dependency is imported by the library itself, not only by dealroom.testing
    or the modules it gathers (what only tests need belongs in the dev extra)."""
    import re
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=\[ ]", d, maxsplit=1)[0] for d in deps}
    assert names == set(CORE_IMPORTS), "name the import of each new core dependency here"
    support = {SRC / "testing.py", SRC / "models" / "_mock.py", SRC / "models" / "_served.py",
               SRC / "train" / "_tiny.py"}
    library = "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py")
                        if p not in support)
    unused = [n for n, mod in CORE_IMPORTS.items()
              if not re.search(rf"^\s*(import|from) {mod}\b", library, re.M)]
    assert unused == []


LOOSE = re.compile(r"(?<!str, )\bAny\b")
"""``Any`` other than as the values of a JSON record (``dict[str, Any]``)."""


@pytest.mark.parametrize("package", ["dealroom", "dealroom.harness", "dealroom.judge",
                                     "dealroom.measure"])
def test_the_front_doors_name_what_they_take(package: str) -> None:
    """An editor sees the real type of every parameter of the public functions (models are
    ModelClient, rooms Room or a folder, judges Judge or a name); only ``**options`` forwarded
    to a harness's settings stay open."""
    import importlib
    import inspect

    module = importlib.import_module(package)
    loose = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not inspect.isfunction(obj):
            continue
        for param in inspect.signature(obj).parameters.values():
            if param.kind is not param.VAR_KEYWORD and LOOSE.search(str(param.annotation)):
                loose.append(f"{name}({param.name}: {param.annotation})")
    assert loose == []
