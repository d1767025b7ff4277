"""``generate_room``: plan a room, write its documents, then its manifest, rubric and key.

The room is written into a hidden temporary folder beside ``out`` and renamed into place at the
end, so a failed or interrupted run leaves nothing behind and never touches existing files.

What identifies the generation — seed, profile, requested counts and the room's secret — goes
to ``answer_key/generation.json`` only, never to ``room.json`` (which the agent reads): with
the secret unknown, no seed search regenerates the room, its rubric or its answer key.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from dealroom._util.files import make_dir, write_json_atomic
from dealroom.errors import ConfigError, InputError
from dealroom.room._generate._plan import RoomPlan, plan_room
from dealroom.room._generate._render import render_all
from dealroom.room._generate._rubric import Rubric
from dealroom.room._generate._settings import GenerateSettings
from dealroom.room._manifest import ANSWER_KEY, MANIFEST, TASK
from dealroom.room._room_schema import DocumentRecord, RoomManifest
from dealroom.room._tokens import TOKENIZER

GENERATOR = "dealroom-generate/2"
"""2: every random draw keyed by the room's secret."""
GENERATION = "generation.json"
"""``answer_key/`` file holding the arguments and the secret that regenerate the room."""

Progress = Callable[[int, int], None]


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} exists and is not a folder; choose a new or empty folder")
    if out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"{out} already holds files; choose a new or empty folder "
                          "(nothing was written)")


def _manifest(plan: RoomPlan, results: list) -> RoomManifest:
    ctx = plan.ctx
    docs = [DocumentRecord(id=p.id, path=p.path, title=p.title, category=p.category,
                           folder=p.folder, format=p.fmt, pages=r.pages, tokens=r.tokens,
                           sha256=r.sha256, bytes=r.bytes)
            for p, r in zip(plan.plans, results, strict=True)]
    meta = {"generator": GENERATOR, "target": ctx.target, "buyer": ctx.buyer,
            "codename": ctx.codename, "as_of": ctx.as_of, "close_date": ctx.close_date}
    return RoomManifest(name=ctx.target, documents=docs, tokenizer=TOKENIZER, meta=meta)


def _write_room(tmp: Path, settings: GenerateSettings, progress: Progress | None) -> RoomManifest:
    plan = plan_room(settings)
    for folder in sorted({p.path.rsplit("/", 1)[0] for p in plan.plans}):
        (tmp / folder).mkdir(parents=True, exist_ok=True)
    results = list(render_all(plan.ctx, plan.plans, tmp, settings.worker_count, progress))
    manifest = _manifest(plan, results)
    rubric = Rubric(plan, results)
    write_json_atomic(tmp / MANIFEST, manifest.to_dict())
    write_json_atomic(tmp / TASK, rubric.task_json())
    write_json_atomic(tmp / ANSWER_KEY / "findings.json", rubric.findings_json())
    (tmp / ANSWER_KEY / "gold_memo.md").write_text(rubric.gold_memo(len(plan.plans)),
                                                   encoding="utf-8")
    write_json_atomic(tmp / ANSWER_KEY / GENERATION, generation(settings))
    return manifest


def generation(settings: GenerateSettings) -> dict[str, object]:
    """What ``answer_key/generation.json`` holds: the arguments and secret that regenerate."""
    command = (f"dealroom generate OUT --docs {settings.docs} --seed {settings.seed} --profile "
               f"{settings.profile} --tokens {settings.total_tokens} --secret {settings.secret}")
    return {"generator": GENERATOR, "seed": settings.seed, "profile": settings.profile,
            "docs": settings.docs, "tokens": settings.total_tokens, "secret": settings.secret,
            "regenerate": command}


def generate(out: Path, settings: GenerateSettings,
             progress: Progress | None = None) -> RoomManifest:
    """Write the room described by ``settings`` to ``out`` (a new or empty folder)."""
    out = Path(out)
    _check_out(out)
    make_dir(out.parent, "the room's parent folder")
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    except OSError as exc:
        raise InputError(f"cannot write the room {out}: {exc.strerror or exc}: give a folder "
                         "that can be written") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)
        manifest = _write_room(tmp, settings, progress)
        _check_out(out)
        if out.is_dir():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def generate_room(
    out: Path | str,
    docs: int = 20,
    seed: int = 0,
    profile: str = "bank",
    tokens: int | None = None,
    *,
    secret: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> RoomManifest:
    """Generate a synthetic diligence data room in ``out`` and return its manifest.

    The same arguments, ``secret`` included, always give byte-identical rooms. ``secret``
    keys every random draw so that nothing an agent sees regenerates the room; without it a
    fresh one is drawn, and ``answer_key/generation.json`` records it (with the command that
    regenerates the room). ``tokens`` sets the room's total (default 13,600 per document);
    ``progress(done, total)`` is called as documents are written.
    Raises :class:`~dealroom.errors.ConfigError` for bad settings or an ``out`` that already
    holds files (nothing is written then).

    >>> manifest = generate_room("/tmp/toy-room", docs=20, seed=1, secret="s3")  # doctest: +SKIP
    """
    settings = GenerateSettings.model_validate({
        "docs": docs, "seed": seed, "profile": profile, "tokens": tokens, "workers": workers,
        "secret": secret})
    return generate(Path(out), settings, progress)
