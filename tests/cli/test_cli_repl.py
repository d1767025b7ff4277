"""``dealroom repl`` starts its sub-agent only when a cell calls one."""

import sys

import pytest


def repl(monkeypatch, capsys, *args):
    from dealroom.cli import main

    monkeypatch.setattr(sys, "argv", ["dealroom", "repl", *map(str, args)])
    with pytest.raises(SystemExit) as exit_:
        main()
    return exit_.value.code, capsys.readouterr()


def test_cells_that_call_no_model_need_no_model(small_room, monkeypatch, capsys):
    import dealroom.models._local as local

    monkeypatch.setattr(local, "_SERVER_MODULES", ("no_such_module_for_dealroom",))
    code, out = repl(monkeypatch, capsys, small_room, "-c", "print(len(room.docs))")
    assert (code, out.out) == (0, "4\n"), out.err
    code, out = repl(monkeypatch, capsys, small_room, "-c", "llm('hi', docs=['D00001'])")
    assert code == 1 and "SubcallFailed: llama-cpp-python is needed" in out.err
    assert 'pip install "dealroom[local]"' in out.err
