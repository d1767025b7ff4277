"""The private helpers' docstring examples, and the plug-in hook's errors."""

import doctest

import pytest

import dealroom._util.files
import dealroom.runs._events
from dealroom._util.plugins import Registry
from dealroom.errors import ConfigError


@pytest.mark.parametrize("module", [dealroom._util.files, dealroom.runs._events])
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_a_registry_lists_its_names_and_says_what_failed() -> None:
    registry = Registry("dealroom.no_such_group", {"json": "json:dumps", "gone": "no_such:x"},
                        "widget")
    assert registry.names() == ["gone", "json"] and "json" in registry
    assert registry.load("json")([1]) == "[1]"
    with pytest.raises(ConfigError, match=r"unknown widget 'x': choose one of gone, json; "
                                          r"install it"):
        registry.load("x", unknown="install it")
    with pytest.raises(ConfigError, match=r"widget 'gone' \(no_such:x\) could not be imported"):
        registry.load("gone")
