"""``dealroom report`` (the HTML report over sweeps and runs) and ``dealroom view`` (one run's
trace viewer)."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import app

VIEW_FOLDER = "view"
"""``dealroom view RUN``'s folder in RUN when --out is not given."""


@app.command()
def report(
    sources: list[str] = typer.Argument(
        ..., metavar="RUNS_OR_SWEEPS...",
        help="Sweep folders, folders of runs, run folders or recovery folders (each "
             "may carry a :root=...,sub=... selector); kept apart by source, setting "
             "and kind."),
    out: Path = typer.Option(..., "--out", help="The report folder (new, or a report's)."),
    title: str = typer.Option(None, "--title", help="The report's title."),
    headline: str = typer.Option(
        "headline", "--headline", help="The pass rate shown first: headline (each episode's "
        "scores.json headline: positive criteria where its rubric has negative ones, else all), "
        "total (all criteria; negative ones pass an empty memo) or positive."),
) -> None:
    """Write DIR/index.html (tables, plots, episodes linking to their traces) and
    DIR/report.json; the folder opens from disk."""
    from dealroom.cli.display import generation_progress
    from dealroom.cli.display_report import render_written
    from dealroom.report import build_report

    with generation_progress(0, label="writing traces") as progress:
        index = build_report(sources, out, title=title, progress=progress,
                             headline_rate=headline)
    render_written(index)


@app.command()
def view(
    run: Path = typer.Argument(..., metavar="RUN_OR_DIR",
                               help="A run folder, or a sweep or folder of runs."),
    out: Path = typer.Option(None, "--out", help="The viewer's folder (default: RUN/view, "
                                                 "rewritten each time)."),
    serve: bool = typer.Option(False, "--serve", help="Serve it on 127.0.0.1 until Ctrl-C "
                               "(a folder's list is rewritten as its runs are written)."),
    port: int = typer.Option(8765, "--port", min=0, max=65535,
                             help="The port of --serve (0: any free port)."),
) -> None:
    """Write the trace viewer of RUN (timeline, sub-calls, memo history, scores, coverage,
    usage) into RUN/view or --out, and print where; it opens from disk, or from the local
    server with --serve. Given a sweep or a folder of runs, write the list of its runs
    (status, room, policy, pass rate, cost, turns), each opening its trace; with --serve the
    list refreshes while runs are being written. Nothing is written when RUN holds no run."""
    import threading

    from dealroom.cli.display_report import render_serving, render_written
    from dealroom.report import make_server, write_listing, write_trace
    from dealroom.runs import CONFIG

    if out is None:
        out = run / VIEW_FOLDER
    single = (run / CONFIG).is_file()
    # each opens RUN (a ConfigError if it holds no run) before writing
    index = write_trace(run, out) if single else write_listing(run, out, allow_empty=serve)
    render_written(index)
    if serve:
        server = make_server(out, port)
        stop = threading.Event()
        if not single:
            from dealroom.report import Listing, watch_listing

            threading.Thread(target=watch_listing, args=(Listing(run, out), stop),
                             daemon=True).start()
        render_serving(server.server_address)
        try:
            server.serve_forever()
        finally:
            stop.set()
            server.server_close()
