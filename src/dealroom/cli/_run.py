"""``dealroom run``, ``resume``, ``repl`` and ``demo``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import typer

from dealroom import DEMO_DOCS
from dealroom.cli import app, read_models_file
from dealroom.cli._exit import exit_code
from dealroom.cli.display import render_demo, render_run_result
from dealroom.cli.display_live import RunDisplay

MODELS_HELP = "Models file (TOML) naming models; default ./models.toml or ~/.config/dealroom."
SETTING_OF_FLAG = {"max_cost": "max_cost_usd"}
"""``dealroom run`` flags whose settings field has another name (``--max-cost``)."""
PROGRESS_HELP = ("Off a terminal (a pipe, a log file): seconds between plain progress lines "
                 "(default 15; 0: none). On a terminal the status line is redrawn in place.")


def _exit_for(result) -> None:  # type: ignore[no-untyped-def]
    """Exit with the code of the run's end status (:data:`dealroom.cli._exit.END_STATUS_CODES`)."""
    code = exit_code(result.status)
    if code:
        raise typer.Exit(code)


@app.command()
def run(
    room: Path = typer.Argument(..., help="The data room folder."),
    out: Path = typer.Option(..., "--out", help="New run folder to write."),
    harness: str = typer.Option("rlm", help="rlm or toolloop."),
    root: str = typer.Option(
        "scripted", help="Root model: NAME, local, MODEL@URL, scripted[:coverage=..,waves=..]."),
    sub: list[str] = typer.Option(
        None, help="Sub-agent model (rlm): NAME, local, MODEL@URL, oracle[:recall=..] "
                   "(default local); repeat as --sub fast=MODEL --sub strong=MODEL for named "
                   "models, the first the default."),
    depth: int = typer.Option(None, help="RLM depth: 1 plain sub-calls, 2+ child REPLs."),
    max_turns: int = typer.Option(None, "--max-turns", help="Root turn budget."),
    max_cost: float = typer.Option(None, "--max-cost", help="Budget in USD, children included."),
    max_cost_per_model: list[str] = typer.Option(
        None, "--max-cost-per-model",
        help="NAME=USD: most a named sub-agent model may cost (repeatable); calls past it fail."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Token budget over all calls."),
    max_seconds: float = typer.Option(None, "--max-seconds", help="Wall-clock budget."),
    concurrency: int = typer.Option(None, help="Parallel calls per endpoint (default 64)."),
    cell_timeout: float = typer.Option(None, "--cell-timeout", help="Seconds per REPL cell."),
    slice_tokens: int = typer.Option(
        None, "--slice-tokens", help="Most room tokens per sub-call (default: what fits)."),
    output_limit: int = typer.Option(
        None, "--output-limit", help="Characters of printed output the root sees per cell."),
    sub_max_output: int = typer.Option(
        None, "--sub-max-output", help="Completion tokens a sub-agent may write per call."),
    temperature: float = typer.Option(
        None, "--temperature", help="Sampling temperature of every model call (default 0)."),
    budget_visible: bool = typer.Option(
        None, "--budget-visible/--budget-hidden",
        help="Tell the root 'Turn k of T' (default), or only 'Turn k'."),
    reasoning_history: str = typer.Option(
        None, "--reasoning-history",
        help="drop (default): earlier replies' reasoning leaves the root's history; keep."),
    compact_at: float = typer.Option(
        None, "--compact-at",
        help="Compact the root's history before its prompt passes this share of its window "
             "(default 0.85)."),
    compact: str = typer.Option(
        None, "--compact", help="off: never compact the root's history (as --compact-at 0)."),
    max_errors: int = typer.Option(
        None, "--max-errors",
        help="End with status errors after N turns in a row without runnable code or with an "
             "exception (default 8; 0 never)."),
    memo_limit: int = typer.Option(
        None, "--memo-limit",
        help="Characters the root's memo may hold; a write past it fails (default 10 MiB)."),
    child_concurrency: int = typer.Option(
        None, "--child-concurrency",
        help="Children of one rlm_batch() that run at a time (default 4)."),
    models: Path = typer.Option(None, "--models", help=MODELS_HELP,
                                callback=read_models_file),
    budgetmix: str = typer.Option(
        None, "--budgetmix",
        help="PLAN:STEP:GROUP: follow that BudgetMix plan entry (its T, recorded in config)."),
    progress_every: float = typer.Option(None, "--progress-every", min=0, help=PROGRESS_HELP),
    tools: list[Path] = typer.Option(
        None, "--tools", help="Python file whose public functions the REPL holds, run inside "
                              "the sandbox (repeatable)."),
    host_tools: list[Path] = typer.Option(
        None, "--host-tools", help="Python file whose public functions run on the host, called "
                                   "from the REPL with JSON in and out, each call recorded "
                                   "(repeatable)."),
    host_tool_timeout: float = typer.Option(
        None, "--host-tool-timeout", help="Seconds one host tool call may take (default 60)."),
    max_host_tool_calls: int = typer.Option(
        None, "--max-host-tool-calls", help="Host tool calls per run (default 1000)."),
) -> None:
    """Run an agent on a data room; records go to the run folder as it works.

    Exits 0 when the run ended by itself or ran out of turns or budget (submitted, finished,
    max_turns, budget_exhausted); 1 on status error (the root model failed); 3 when it is
    degraded (more than 10% of its sub-calls failed at the provider or were cut off in
    flight; every request sent is recorded); 4 on status errors (--max-errors root turns in a
    row ran no code or raised); 2 on bad input, 130 on Ctrl-C.
    """
    from dealroom.errors import ConfigError
    from dealroom.harness import cost_caps, run_agent_async, sub_specs

    if compact not in (None, "off", "on"):
        raise ConfigError(f"--compact takes off (or on), not {compact!r}")
    if compact == "off":
        compact_at = 0.0
    flags = {"depth": depth, "max_turns": max_turns, "max_cost": max_cost,
             "max_tokens": max_tokens, "max_seconds": max_seconds,
             "cell_timeout": cell_timeout, "slice_tokens": slice_tokens,
             "output_limit": output_limit, "sub_max_output": sub_max_output,
             "temperature": temperature, "budget_visible": budget_visible,
             "reasoning_history": reasoning_history, "compact_at": compact_at,
             "max_errors": max_errors, "memo_limit": memo_limit,
             "tools": [str(p) for p in tools] if tools else None,
             "host_tools": [str(p) for p in host_tools] if host_tools else None,
             "host_tool_timeout": host_tool_timeout, "max_host_tool_calls": max_host_tool_calls,
             "max_cost_per_model": cost_caps(max_cost_per_model),
             "child_concurrency": child_concurrency}
    options: dict[str, Any] = {SETTING_OF_FLAG.get(flag, flag): v for flag, v in flags.items()}
    if budgetmix is not None:
        from dealroom.eval import budgetmix_run_options

        options.update(budgetmix_run_options(budgetmix, room, max_turns=max_turns,
                                             budget_visible=budget_visible))
    with RunDisplay(max_turns=options["max_turns"], every=progress_every) as display:
        result = asyncio.run(run_agent_async(
            room, out, harness=harness, root=root, sub=sub_specs(sub or ["local"]),
            models_file=models, concurrency=concurrency, listeners=(display,), **options,
        ))
    render_run_result(result)
    _exit_for(result)


@app.command()
def resume(
    run_dir: Path = typer.Argument(
        ..., metavar="RUN", help="An interrupted run folder (or one to fork)."),
    from_turn: int = typer.Option(
        None, "--from-turn", help="Fork: replay root turns 1..J into --out, then play on."),
    out: Path = typer.Option(None, "--out", help="New run folder of the fork."),
    root: str = typer.Option(None, help="Root model of the fork (default: the run's)."),
    sub: str = typer.Option(None, help="Sub-agent model of the fork (default: the run's)."),
    max_turns: int = typer.Option(None, "--max-turns", help="The fork's turn budget."),
    max_cost: float = typer.Option(None, "--max-cost", help="The fork's budget in USD."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="The fork's token budget."),
    max_seconds: float = typer.Option(None, "--max-seconds", help="The fork's wall clock."),
    temperature: float = typer.Option(None, "--temperature", help="The fork's temperature."),
    concurrency: int = typer.Option(None, help="Parallel calls per endpoint (default: the run's)."),
    models: Path = typer.Option(None, "--models", help=MODELS_HELP,
                                callback=read_models_file),
    progress_every: float = typer.Option(None, "--progress-every", min=0, help=PROGRESS_HELP),
    allow_model_change: bool = typer.Option(
        False, "--allow-model-change",
        help="Continue although a model is now another endpoint or model id than recorded."),
) -> None:
    """Finish an interrupted run; completed model calls are replayed, not repeated.

    With --from-turn J --out NEW: fork the run after root turn J. NEW gets its records up to
    there, the REPL state is rebuilt by replaying cells 1..J against the recorded sub-call
    results, and --root plays turn J+1 on with what the run had left of its budget.
    Exits as run does: 0 ended, 1 error, 3 degraded, 4 errors.
    """
    from dealroom.errors import ConfigError
    from dealroom.harness import fork_run_async, resume_run_async

    fork = {"root": root, "sub": sub, "max_turns": max_turns, "max_cost_usd": max_cost,
            "max_tokens": max_tokens, "max_seconds": max_seconds, "temperature": temperature}
    if from_turn is None and (out is not None or any(v is not None for v in fork.values())):
        raise ConfigError("--out and --root go with --from-turn J (to fork the run); "
                          "a plain resume uses the run's own models and settings")
    if from_turn is not None and out is None:
        raise ConfigError("--from-turn needs --out NEW: a fork is written to a new run folder")
    with RunDisplay(max_turns=max_turns, every=progress_every) as display:
        if from_turn is None:
            work = resume_run_async(run_dir, models_file=models, concurrency=concurrency,
                                    listeners=(display,),
                                    allow_model_change=allow_model_change)
        else:
            work = fork_run_async(run_dir, from_turn, out, root=root, sub=sub,
                                  models_file=models, concurrency=concurrency,
                                  listeners=(display,), allow_model_change=allow_model_change,
                                  max_turns=max_turns,
                                  max_cost_usd=max_cost, max_tokens=max_tokens,
                                  max_seconds=max_seconds, temperature=temperature)
        result = asyncio.run(work)
    render_run_result(result)
    _exit_for(result)


@app.command()
def repl(
    room: Path = typer.Argument(..., help="The data room folder."),
    sub: str = typer.Option("local", help="Model behind llm()/llm_batch(): NAME, local, URL."),
    concurrency: int = typer.Option(None, help="Parallel calls per endpoint (default 64)."),
    code: str = typer.Option(None, "-c", help="Run one cell, print its output and exit."),
    depth: int = typer.Option(1, help="2 or more makes rlm() available."),
    cell_timeout: float = typer.Option(120.0, "--cell-timeout", help="Seconds per cell."),
    models: Path = typer.Option(None, "--models", help=MODELS_HELP,
                                callback=read_models_file),
) -> None:
    """The root's sandboxed REPL, for a person: interactive, or one cell with -c."""
    from dealroom.cli._repl import interact, one_cell
    from dealroom.harness.rlm import RLMSettings

    settings = RLMSettings(depth=depth, cell_timeout=cell_timeout, max_turns=10_000,
                           output_limit=1_000_000)
    if code is not None:
        ok = asyncio.run(one_cell(room, sub, code, settings, models, concurrency))
        raise typer.Exit(0 if ok else 1)
    asyncio.run(interact(room, sub, settings, models, concurrency))


@app.command()
def demo(
    out: Path = typer.Option(
        Path("dealroom-demo"), "--out",
        help="Folder for the room, run and scores (taken as OUT-2, OUT-3, ... when OUT holds "
             "files)."),
    sub: str = typer.Option("local", help="Sub-agent model (default: the embedded one)."),
    docs: int = typer.Option(DEMO_DOCS, help="Documents in the generated room."),
    progress_every: float = typer.Option(None, "--progress-every", min=0, help=PROGRESS_HELP),
) -> None:
    """The main job end to end, offline: generate a room, review it, judge the memo; then
    print where it wrote them and the commands to look at the result.

    Exits as run does: 0 ended, 1 error, 3 degraded, 4 errors.
    """
    from dealroom import run_demo_async

    with RunDisplay(max_turns=12, every=progress_every) as display:
        result = asyncio.run(run_demo_async(out, sub=sub, docs=docs, listeners=(display,)))
    render_demo(result)
    _exit_for(result.run)
