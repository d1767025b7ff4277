"""``dealroom export sft`` (judged runs as an SFT dataset, see dealroom.train.export_sft) and
``dealroom export inspect`` (runs as inspect_ai evaluation logs, see
dealroom.report.export_inspect)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dealroom.cli import app
from dealroom.train import SFTSettings

export_app = typer.Typer(name="export", help="Export runs as training data or inspect_ai logs.",
                         no_args_is_help=True)
app.add_typer(export_app)


@export_app.command("sft")
def sft(
    runs: Annotated[list[Path], typer.Argument(
        metavar="RUNS_OR_SWEEPS...",
        help="Run folders, sweeps, or folders holding run folders or sweeps.")],
    out: Annotated[Path, typer.Option("--out", help="New dataset folder (DS).")],
    min_pass_rate: Annotated[float | None, typer.Option(
        "--min-pass-rate", help="Keep runs whose judged pass rate is at least this.")] = None,
    min_coverage: Annotated[float | None, typer.Option(
        "--min-coverage", help="Keep runs whose room coverage is at least this.")] = None,
    top_k: Annotated[int | None, typer.Option(
        "--top-k", help="Per room, keep the best N runs (pass rate, then coverage).")] = None,
    room_median: Annotated[bool, typer.Option(
        "--room-median/--no-room-median",
        help="Leave out runs under the median pass rate of their room's judged runs.")
    ] = True,
    tokenizer: Annotated[str | None, typer.Option(
        "--tokenizer", help="hf: model whose tokenizer writes DS/tokenized.jsonl.")] = None,
    max_length: Annotated[int, typer.Option(
        "--max-length", help="Longest row; longer episodes are split turn by turn.")
    ] = SFTSettings.model_fields["max_length"].default,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace --out when it is a dataset this command wrote.")] = False,
    train_subs: Annotated[bool, typer.Option(
        "--train-subs", help="Also write rows for the runs' children and for their sub-calls "
                             "with recorded token ids (needs --tokenizer).")] = False,
) -> None:
    """Rejection sampling: per room, the judged runs at or above the room's median pass rate
    (and any bars), as chat JSONL and masked rows."""
    from dealroom.cli.display_train import render_export_result, work_progress
    from dealroom.train import export_sft

    with work_progress("episodes") as progress:
        result = export_sft(runs, out, min_pass_rate=min_pass_rate, min_coverage=min_coverage,
                            top_k=top_k, room_median=room_median, tokenizer=tokenizer,
                            max_length=max_length, force=force, train_subs=train_subs,
                            progress=progress)
    render_export_result(result)


@export_app.command("inspect")
def inspect_logs(
    runs: Annotated[list[Path], typer.Argument(
        metavar="RUNS_OR_SWEEPS...",
        help="Run folders, sweeps, or folders holding run folders or sweeps.")],
    out: Annotated[Path, typer.Option(
        "--out", help="The logs' folder (new, or one of inspect logs): NAME.eval per run.")],
) -> None:
    """Write each run (each episode of a sweep) as an inspect_ai evaluation log that `inspect
    view --log-dir DIR` opens and inspect_ai.log.read_eval_log reads: the task and room as
    the input, the root's turns as messages, sub-calls as model events, children as spans,
    the memo as the output, the judge's verdicts as the `rubric` score, usage and cost.
    Needs the inspect extra."""
    from dealroom.cli.display import generation_progress
    from dealroom.cli.display_report import render_exported
    from dealroom.report import export_inspect

    with generation_progress(0, label="writing logs") as progress:
        written = export_inspect(runs, out, progress=progress)
    render_exported(written, out)
