"""constraints.txt pins what CI tests, and .ci/check_pins.py catches drift from it."""

import importlib.metadata
import runpy
from pathlib import Path

ROOT = Path(__file__).parents[1]
check = runpy.run_path(str(ROOT / ".ci" / "check_pins.py"))


def test_every_runtime_dependency_is_pinned():
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = check["pins"](ROOT / "constraints.txt")
    for dep in deps:
        name = check["_normal"](dep.split(">")[0].split("=")[0].split("<")[0].strip())
        assert name in pinned, f"{name} is a dependency but has no pin in constraints.txt"


def test_drift_is_reported(tmp_path):
    have = importlib.metadata.version("pytest")
    good = tmp_path / "good.txt"
    good.write_text(f"# comment\npytest=={have}\nnot-installed-pkg==1.0\n")
    assert check["mismatches"](check["pins"](good)) == []
    bad = tmp_path / "bad.txt"
    bad.write_text("PyTest==0.0.1\n")
    assert check["mismatches"](check["pins"](bad)) == [f"pytest: installed {have}, pinned 0.0.1"]


def test_a_local_build_label_matches_a_pin_without_one():
    assert check["matches"]("2.13.0+cpu", "2.13.0")
    assert check["matches"]("2.13.0", "2.13.0")
    assert not check["matches"]("2.13.0+cpu", "2.13.0+cu128")
    assert not check["matches"]("2.13.1+cpu", "2.13.0")
