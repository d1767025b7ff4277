"""What every command's ``--help`` shows beyond its declaration: examples, and names as the
docs write them.

:class:`DealroomCommand` is the class of every ``dealroom`` command (set by ``_arrange`` in
``dealroom.cli``): arguments print by their upper-case names (``ROOM``, ``OUT``; a declared
``metavar`` wins), flags print no ``<bool>`` type, and the usage line reads
``dealroom inspect [OPTIONS] ROOM``. :data:`EXAMPLES` holds two or three runnable lines per
command, shown as its help's epilog and in docs/cli.md, each line short enough for an
80-column help (a longer command continues with `` \\``); a test asserts every command has
some.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup

EXAMPLES: dict[str, tuple[str, ...]] = {
    "generate": ("dealroom generate rooms/toy --docs 40 --seed 7",
                 "dealroom generate rooms/aravon --docs 2270 --seed 1 --tokens 31M"),
    "inspect": ("dealroom inspect rooms/toy", "dealroom inspect rooms/toy --json"),
    "validate": ("dealroom validate rooms/toy",),
    "ingest": ("dealroom ingest ~/deal-docs rooms/mine",
               "dealroom ingest ~/deal-docs rooms/mine --ocr never"),
    "cuad import": ("dealroom cuad import ~/CUAD_v1 rooms/cuad --contracts 40 --seed 1",),
    "lab import": ("dealroom lab import ~/lab/tasks/antitrust-memo rooms/antitrust",),
    "lab export": ("dealroom lab export rooms/toy lab-tasks/toy",),
    "repl": ("dealroom repl rooms/toy", "dealroom repl rooms/toy -c 'print(room.tree())'"),
    "run": ("dealroom run rooms/toy --out runs/toy-1",
            "dealroom run rooms/toy --out runs/toy-2 --root NAME --sub NAME",
            "dealroom run rooms/toy --out runs/toy-3 --harness toolloop --root NAME"),
    "resume": ("dealroom resume runs/toy-1",
               "dealroom resume runs/toy-1 --from-turn 3 --out runs/toy-1-fork --root NAME"),
    "ask": ("dealroom ask runs/toy-1 'Which contracts need consent for the merger?'",
            "dealroom ask runs/toy-1 'Add the lease findings to the memo' --revise"),
    "judge": ("dealroom judge runs/toy-1", "dealroom judge runs/toy-1 --judge NAME",
              "dealroom judge runs/toy-1 --by-turn"),
    "summary": ("dealroom summary runs/toy-1 runs/toy-2", "dealroom summary runs/toy-1 --json"),
    "view": ("dealroom view runs/toy-1", "dealroom view runs/toy-1 --serve --port 8765",
             "dealroom view sweeps/example --serve"),
    "eval sweep": ("dealroom eval sweep examples/eval_sweep.toml --out sweeps/example",
                   "dealroom eval sweep SPEC.toml --out SWEEP --workers 4"),
    "eval passk": ("dealroom eval passk sweeps/example",
                   "dealroom eval passk sweeps/example --json"),
    "eval table": ("dealroom eval table sweeps/example",
                   "dealroom eval table sweeps/example --by root,max_turns"),
    "eval compare": ("dealroom eval compare sweeps/a sweeps/b",),
    "eval analyze": ("dealroom eval analyze sweeps/example",),
    "eval prefixes": ("dealroom eval prefixes sweeps/example --out pools/example",),
    "eval recover": ("dealroom eval recover pools/ex --root scripted --root NAME --out rec/ex",),
    "report": ("dealroom report sweeps/example --out reports/example",
               "dealroom report sweeps/a sweeps/b --out reports/ab --title 'A vs B'"),
    "export inspect": ("dealroom export inspect runs/toy-1 --out logs/toy-1",
                       "dealroom export inspect sweeps/example runs/ --out logs/all"),
    "export sft": ("dealroom export sft sweeps/example --out datasets/example",
                   "dealroom export sft sweeps/example --out datasets/top --top-k 1"),
    "train sft": ("dealroom train sft datasets/example --model hf:local --out ckpt/sft",),
    "train grpo": ("dealroom train grpo examples/grpo.toml --out ckpt/grpo",),
    "train self-distill": ("dealroom train self-distill SPEC.toml --rounds 3 --out distill/1",),
    "budgetmix plan": ("dealroom budgetmix plan --budgets 8,16,32,64 --groups 4 "
                       "--rooms 'rooms/*' \\\n      --steps 10 --out plan.json",),
    "budgetmix audit": ("dealroom budgetmix audit plan.json runs/*",),
    "demo": ("dealroom demo", "dealroom demo --out /tmp/demo --docs 6"),
    "doctor": ("dealroom doctor", "dealroom doctor --strict --models models.toml"),
}
"""Command path (after ``dealroom``) → example lines; NAME is a model: a models-file name,
``local`` or ``MODEL@URL``."""


def epilog(path: str) -> str | None:
    """The ``Examples:`` block for the command at ``path``, or None when it has none."""
    lines = EXAMPLES.get(path)
    return "Examples:\n" + "\n".join(f"  {line}" for line in lines) if lines else None


def _as_documented(param: Any) -> None:
    """An argument named by its upper-case name; a flag with no type shown."""
    if param.metavar is not None:
        return
    if isinstance(param, TyperArgument):
        param.metavar = param.name.upper() + ("..." if param.nargs != 1 else "")
    elif getattr(param, "is_flag", False) or getattr(param, "count", False):
        param.metavar = ""


class _AsDocumented:
    """Parameters named as the docs write them (mixed into a click command or group)."""

    params: list[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            _as_documented(param)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            _as_documented(option)
        return option


class DealroomGroup(_AsDocumented, TyperGroup):
    """A typer group whose ``--help`` and options show no ``<bool>``."""


class DealroomCommand(_AsDocumented, TyperCommand):
    """A typer command whose help reads as docs/cli.md does (see the module docstring)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS] ROOM`` as click writes it, not typer's ``{ROOM}``."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.metavar or param.name.upper()
                pieces.append(name if param.required else f"[{name}]")
        return pieces
