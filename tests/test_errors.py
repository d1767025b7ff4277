from dealroom.errors import BudgetExceeded, ConfigError, MissingDependency


def test_missing_dependency_names_the_install_command():
    err = MissingDependency("llama-cpp-python", extra="local", feature="the embedded model")
    assert isinstance(err, ConfigError)
    assert 'pip install "dealroom[local]"' in str(err)


def test_budget_exceeded_carries_its_data():
    err = BudgetExceeded("cost", spent=1.5, budget=1.0, partial="memo")
    assert (err.resource, err.spent, err.budget, err.partial) == ("cost", 1.5, 1.0, "memo")
