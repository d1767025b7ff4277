"""Starting an agent's REPL: the host makes the sandbox, the worker runs :func:`bootstrap`."""

from __future__ import annotations

from typing import Any

BOOTSTRAP = "dealroom.harness.rlm._boot:bootstrap"


def make_sandbox(episode: Any) -> Any:
    """A :class:`ProcessSandbox` for ``episode``, with its own scratch folder."""
    from dealroom.harness.sandbox import ProcessSandbox, SandboxLimits

    ctx = episode.ctx
    scratch = ctx.scratch / episode.agent.replace("/", "_")
    scratch.mkdir(parents=True, exist_ok=True)
    options = {
        "max_depth": ctx.settings.depth,
        "context_tokens": episode.sub_context_tokens(),
        "deliverables": ctx.deliverables.files,
    }
    return ProcessSandbox(
        ctx.room_dir,
        scratch,
        SandboxLimits(cell_timeout=ctx.settings.cell_timeout),
        bootstrap=BOOTSTRAP,
        options=options,
        depth=episode.depth,
    )


def bootstrap(host: Any) -> dict[str, Any]:
    """Runs inside the worker: the REPL names of :func:`build_namespace` over the room."""
    from dealroom.harness.rlm._repl_api import build_namespace
    from dealroom.room import Room

    return build_namespace(
        host.request,
        room=Room.open(host.room_dir),
        depth=host.depth,
        max_depth=host.options["max_depth"],
        context_tokens=host.options["context_tokens"],
        deliverables=host.options["deliverables"],
    )
