"""constraints.txt pins what CI tests, and .ci/check_pins.py catches drift from it."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from dealroom._util.pins import dependency_tree, matches, mismatches, normal_name, pins

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


def _fake_dist(site: Path, name: str, version: str, requires: list[str] = (),
               extras: list[str] = ()) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Provides-Extra: {e}" for e in extras] + [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")


def test_only_the_dependency_tree_is_compared(tmp_path, monkeypatch):
    """A package that something else installed at another version is not drift (CI's shared
    interpreter holds rpds-py 0.30.0 for a package that is not ours)."""
    _fake_dist(tmp_path, "rootpkg", "1.0", ["childpkg>=1", 'extrapkg; extra == "x"',
                                            'neverpkg; python_version < "3"'], ["x"])
    _fake_dist(tmp_path, "childpkg", "2.0", ["grandpkg"])
    _fake_dist(tmp_path, "grandpkg", "2.0")
    _fake_dist(tmp_path, "extrapkg", "2.0")
    _fake_dist(tmp_path, "neverpkg", "2.0")
    _fake_dist(tmp_path, "strangerpkg", "2.0")
    monkeypatch.syspath_prepend(str(tmp_path))
    pinned = {n: "1.0" for n in ("childpkg", "grandpkg", "extrapkg", "neverpkg", "strangerpkg")}
    drift = lambda extras: [line.split(":")[0] for line in  # noqa: E731
                            mismatches(pinned, root="rootpkg", extras=extras)]
    assert drift([]) == ["childpkg", "grandpkg"]
    assert drift(["x"]) == ["childpkg", "extrapkg", "grandpkg"]
    assert drift(None) == ["childpkg", "extrapkg", "grandpkg"]
    assert dependency_tree("no-such-root") == {}
