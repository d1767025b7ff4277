"""constraints.txt pins what CI tests, and .ci/check_pins.py catches drift from it."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from dealroom._util.pins import matches, mismatches, normal_name, pins

ROOT = Path(__file__).parents[1]


def test_every_runtime_dependency_is_pinned():
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = pins(ROOT / "constraints.txt")
    for dep in deps:
        name = normal_name(dep.split(">")[0].split("=")[0].split("<")[0].strip())
        assert name in pinned, f"{name} is a dependency but has no pin in constraints.txt"


def test_drift_is_reported(tmp_path):
    have = importlib.metadata.version("pytest")
    good = tmp_path / "good.txt"
    good.write_text(f"# comment\npytest=={have}\nnot-installed-pkg==1.0\n")
    assert mismatches(pins(good)) == []
    bad = tmp_path / "bad.txt"
    bad.write_text("PyTest==0.0.1\n")
    assert mismatches(pins(bad)) == [f"pytest: installed {have}, pinned 0.0.1"]


def test_the_ci_script_reports_drift(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("PyTest==0.0.1\n")
    done = subprocess.run([sys.executable, str(ROOT / ".ci" / "check_pins.py"), str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "version drift: pytest: installed" in done.stderr


def test_a_local_build_label_matches_a_pin_without_one():
    assert matches("2.13.0+cpu", "2.13.0")
    assert matches("2.13.0", "2.13.0")
    assert not matches("2.13.0+cpu", "2.13.0+cu128")
    assert not matches("2.13.1+cpu", "2.13.0")
