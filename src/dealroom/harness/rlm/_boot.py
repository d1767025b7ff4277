"""Starting an agent's REPL: the host makes the sandbox, the worker runs :func:`bootstrap`.

The worker imports this module at every REPL start: it imports nothing the host alone needs
(asyncio, the engine); the host's background start is :mod:`._starting`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dealroom.harness.rlm._engine import Episode
    from dealroom.harness.sandbox import Host, ProcessSandbox

BOOTSTRAP = "dealroom.harness.rlm._boot:bootstrap"
WAIT_CEILING = 6 * 3600.0
"""Wall-clock ceiling of one cell, sub-call waits included, when the run sets no
``--max-seconds`` (which bounds it otherwise): waiting for sub-agents is bounded by the run's
budget and each call's deadline, not by the cell's time-out, which bounds the cell's own
computing and sleeping (and CPU spent while calls are out)."""


def make_sandbox(episode: Episode) -> ProcessSandbox:
    """A :class:`ProcessSandbox` for ``episode``, with its own scratch folder."""
    from dealroom.harness.sandbox import ProcessSandbox, SandboxLimits

    ctx = episode.ctx
    scratch = ctx.scratch / episode.agent.replace("/", "_")
    scratch.mkdir(parents=True, exist_ok=True)
    options = {
        "max_depth": ctx.settings.depth,
        "context_tokens": episode.sub_context_tokens(),
        "deliverables": ctx.deliverables.files,
        "memo_limit": ctx.settings.memo_limit,
        **ctx.tools.repl_options(),
        "models": ctx.pool.describe(ctx.settings, episode.sub),
    }
    return ProcessSandbox(
        ctx.room_dir,
        scratch,
        SandboxLimits(cell_timeout=ctx.settings.cell_timeout,
                      cell_wall_timeout=max(WAIT_CEILING, 4 * ctx.settings.cell_timeout)),
        bootstrap=BOOTSTRAP,
        options=options,
        depth=episode.depth,
    )


def bootstrap(host: Host) -> dict[str, Any]:
    """Runs inside the worker: the REPL names of :func:`build_namespace` over the room."""
    from dealroom.harness.rlm._repl_api import build_namespace, host_dense_search
    from dealroom.harness.rlm._tools import ToolError, repl_tools
    from dealroom.room import Room

    assert host.room_dir is not None, "make_sandbox always gives the worker its room"
    namespace = build_namespace(
        host.request,
        room=Room.open(host.room_dir, dense_search=host_dense_search(host.request),
                       built=True),
        depth=host.depth,
        max_depth=host.options["max_depth"],
        context_tokens=host.options["context_tokens"],
        deliverables=host.options["deliverables"],
        memo_limit=host.options["memo_limit"],
        models=host.options.get("models"),
    )
    return {**namespace, "ToolError": ToolError, **repl_tools(host.request, host.options)}
