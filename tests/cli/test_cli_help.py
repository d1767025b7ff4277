"""Every command's ``--help`` as the docs write it: an Examples section whose lines use the
command's own flags, no ``<bool>`` on flags, arguments by their documented names; and every
default docs/cli.md prints is the value the command really gets when the flag is left out."""

import re
import shlex

import pytest
import typer
from support.cli import dealroom

from dealroom.cli import app
from dealroom.cli._help import EXAMPLES
from dealroom.cli._reference import _describe


def commands(command=None, path=()):
    command = command or typer.main.get_command(app)
    if hasattr(command, "commands"):
        for name, sub in sorted(command.commands.items()):
            yield from commands(sub, (*path, name))
    else:
        yield " ".join(path), command


COMMANDS = dict(commands())


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_help_has_examples_no_bool_metavar_and_upper_case_arguments(path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    shown = dealroom(*path.split(), "--help")
    assert shown.returncode == 0, shown.stderr
    assert "Examples:" in shown.stdout and f"dealroom {path} " in shown.stdout
    assert "<bool>" not in shown.stdout
    usage = next(line for line in shown.stdout.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage
    for word in usage.split("[OPTIONS]")[1].split():
        assert word.strip("[].") == word.strip("[].").upper(), usage


@pytest.mark.parametrize("group", ["", "eval", "export", "train", "budgetmix", "lab", "cuad"])
def test_group_help_shows_no_bool_either(group, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    shown = dealroom(*group.split(), "--help")
    assert shown.returncode == 0 and "--help" in shown.stdout, shown.stderr
    assert "<bool>" not in shown.stdout


def test_arguments_print_as_the_docs_name_them():
    usage = {path: COMMANDS[path].collect_usage_pieces(COMMANDS[path].make_context(
        path, [], resilient_parsing=True)) for path in
             ("inspect", "generate", "resume", "report", "export sft", "train sft")}
    assert usage["inspect"] == ["[OPTIONS]", "ROOM"] and usage["generate"] == ["[OPTIONS]", "OUT"]
    assert usage["resume"] == ["[OPTIONS]", "RUN"]
    assert usage["report"][1] == usage["export sft"][1] == "RUNS_OR_SWEEPS..."
    assert usage["train sft"][1] == "DS"


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_every_example_names_a_command_and_only_its_flags(path):
    command = COMMANDS[path]
    flags = {o for p in command.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
    assert 1 <= len(EXAMPLES[path]) <= 3
    for line in EXAMPLES[path]:
        assert all(len(part) <= 76 for part in line.splitlines()), "wraps in an 80-column help"
        words = shlex.split(line.replace("\\\n", " "))
        assert words[: 1 + len(path.split())] == ["dealroom", *path.split()], line
        unknown = [w for w in words if w.startswith("-") and w.split("=")[0] not in flags]
        assert not unknown, f"{line}: {unknown}"


def parsed_default(command, param):
    """The value the command's function gets when the flag is left out."""
    return command.make_context("x", [], resilient_parsing=True).params[param.name]


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_printed_default_is_what_the_command_gets(path):
    command = COMMANDS[path]
    for param in command.params:
        if isinstance(param, typer.core.TyperArgument) or param.required:
            continue
        printed = re.search(r"\[default: (.*)\]$", _describe(param))
        value = parsed_default(command, param)
        value = getattr(value, "value", value)
        if getattr(param, "secondary_opts", None):  # --x/--no-x
            names = {True: param.opts[0], False: param.secondary_opts[0], None: None}
            expected = names[value] and names[value].lstrip("-")
        elif value is None or value is False or value in ((), []):
            expected = None
        else:
            expected = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        assert (printed and printed.group(1)) == expected, (path, param.name, value)


def test_budget_visibility_is_not_said_hidden_when_the_run_shows_it(generated_room,
                                                                   tmp_path):
    """`dealroom run` without the flag tells the root its budget; docs/cli.md must not say
    the default is budget-hidden (the Pass@(K,T) setting a user measured depends on it)."""
    option = next(p for p in COMMANDS["run"].params if p.name == "budget_visible")
    assert "budget-hidden" not in _describe(option)
    done = dealroom("run", generated_room, "--out", tmp_path / "run", "--sub", "oracle",
                    "--max-turns", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    config = (tmp_path / "run" / "config.json").read_text()
    assert re.search(r'"budget_visible": true', config), config
