"""Error-prefix evaluation: every pooled prefix continued K times by each policy, judged, and
compared on the same prefixes.

    DIR/recover.json      the spec (pool, roots, k, judge, ...), each continuation's status,
                          the originals' judged criteria; rewritten as each one finishes
    DIR/episodes/r0-scripted/p00001/s0/   a continuation: a fork of the prefix's run
    DIR/report.json       the figures (:func:`recovery_report`)

A continuation is ``fork_run(prefix.run, prefix.turn, ...)`` with the policy as root and the
run's own sub-agent, then judged. Sample s passes seed s to the policies that take one
(``scripted:coverage=0.3`` plays sample 2 as ``scripted:coverage=0.3,seed=2``), as a sweep's
samples do, so the K continuations of a seeded policy differ. Running the same command again
skips finished continuations, resumes interrupted ones and never plays one twice; a failing
continuation is recorded with its error and the rest go on. The continuations run as a sweep's
episodes do (:mod:`dealroom.eval._executor`): on a local process pool or on Ray, one lock per
continuation.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import json_safe, read_json, write_json_atomic
from dealroom.errors import ConfigError, DealroomError
from dealroom.eval._executor import check_backend, execute, job_lock
from dealroom.eval._metrics import mean_pass_at_k, sign_test
from dealroom.eval._passk import DEFAULT_TAU
from dealroom.eval._prefixes import Prefix, PrefixPool, check_kinds
from dealroom.eval._spec import seeded_parts, with_seed
from dealroom.runs import EPISODES, RunFolder, root_replies

if TYPE_CHECKING:
    from dealroom.judge import Scores

SPEC_FILE = "recover.json"
REPORT_FILE = "report.json"
SPEC_KEYS = ("pool", "roots", "k", "judge", "sub", "temperature", "kinds")
Progress = Callable[[int, int, int], None]
"""``progress(done, failed, total)``, called as continuations finish."""


@dataclass
class Continuation:
    """One continuation: a prefix played on by one policy, one sample."""

    id: str
    prefix: str
    root: str
    sample: int
    run: str
    """Its run folder, relative to DIR."""
    status: str = "pending"
    """``pending``, ``done`` (played and judged) or ``failed``."""
    error: str | None = None


def recover(pool_dir: Path, roots: list[str], k: int, out: Path, *, judge: str = "reference",
            sub: str | None = None, temperature: float | None = None,
            kinds: list[str] | None = None, workers: int = 1, backend: str = "process",
            address: str | None = None, models_file: Path | None = None,
            progress: Progress | None = None, tau: float = DEFAULT_TAU) -> dict[str, Any]:
    """Continue every prefix of the pool in ``pool_dir`` ``k`` times with each of ``roots``
    into ``out`` and return (and write) the report of :func:`recovery_report`. ``sub``
    replaces the prefixes' sub-agent (default: each run's own); ``temperature`` the roots';
    ``workers``, ``backend`` (``process`` or ``ray``) and ``address`` as for a sweep; ``tau``:
    a continuation succeeds with a pass rate of at least ``tau``."""
    out = Path(out)
    _check_tau(tau)
    workers = check_backend(backend, workers, address)
    pool = PrefixPool.load(pool_dir)
    prefixes = [p for p in pool.prefixes if not kinds or p.kind in kinds]
    spec = _spec(pool, roots, k, judge, sub, temperature, kinds)
    if not prefixes:
        raise ConfigError(f"{pool_dir} holds no prefixes{' of those kinds' if kinds else ''}")
    state = _open(out, spec, prefixes)
    todo = [c for c in state["episodes"] if c.status != "done" or not _finished(out / c.run)]
    by_id = {p.id: p for p in prefixes}
    jobs = [(c.id, (_job(c, by_id[c.prefix], spec, out, models_file),)) for c in todo]
    episodes = {c.id: c for c in state["episodes"]}
    done = len(state["episodes"]) - len(todo)

    def finished(cid: str, result: dict[str, Any]) -> None:
        nonlocal done
        episodes[cid].status, episodes[cid].error = result["status"], result.get("error")
        done += 1
        _save(out, state)
        if progress:
            progress(done, sum(c.status == "failed" for c in state["episodes"]),
                     len(state["episodes"]))

    execute(play_continuation, jobs, finished, workers=workers, backend=backend,
            address=address)
    state["originals"] = _originals(prefixes, state.get("originals", {}), judge, models_file)
    _save(out, state)
    report = _report(prefixes, state["episodes"], state["originals"], out, spec, tau)
    write_json_atomic(out / REPORT_FILE, json_safe(report))
    return json_safe(report)


def recovery_report(path: Path, *, tau: float = DEFAULT_TAU) -> dict[str, Any]:
    """The figures of the recovery folder ``path`` (what ``recover`` returned), computed again
    from its ``recover.json``, its pool and the continuations finished so far; ``tau`` as for
    :func:`recover`. A ConfigError when ``path`` holds no recovery."""
    path = Path(path)
    _check_tau(tau)
    state = read_json(path / SPEC_FILE, ConfigError,
                      f"{path} is not a recovery ({SPEC_FILE} is missing): make one with "
                      "`dealroom eval recover POOL --root ... --out DIR`")
    spec = {key: state.get(key) for key in SPEC_KEYS}
    pool = PrefixPool.load(Path(spec["pool"]))
    prefixes = [p for p in pool.prefixes if not spec["kinds"] or p.kind in spec["kinds"]]
    episodes = [Continuation(**e) for e in state.get("episodes", [])]
    for c in episodes:
        if c.status == "done" and not _finished(path / c.run):
            c.status = "pending"
    return json_safe(_report(prefixes, episodes, state.get("originals", {}), path, spec, tau))


def _check_tau(tau: float) -> None:
    if not 0 <= tau <= 1:
        raise ConfigError(f"--tau is a pass rate between 0 and 1, got {tau}")


def _spec(pool: PrefixPool, roots: list[str], k: int, judge: str, sub: str | None,
          temperature: float | None, kinds: list[str] | None) -> dict[str, Any]:
    if not roots:
        raise ConfigError("give at least one --root policy")
    if len(set(roots)) != len(roots):
        raise ConfigError(f"--root names a policy twice: {roots}")
    if k < 1:
        raise ConfigError("--k must be at least 1")
    check_kinds(kinds or [])
    return {"pool": str(pool.path.resolve()), "roots": list(roots), "k": k, "judge": judge,
            "sub": sub, "temperature": temperature, "kinds": sorted(kinds) if kinds else None}


def _open(out: Path, spec: dict[str, Any], prefixes: list[Prefix]) -> dict[str, Any]:
    """The recovery's state: read back from ``out`` (same spec only) or started there."""
    planned = [Continuation(f"{r}-{p.id}-s{s}", p.id, root, s,
                            f"{EPISODES}/r{r}-{_slug(root)}/{p.id}/s{s}")
               for r, root in enumerate(spec["roots"]) for p in prefixes
               for s in range(spec["k"])]
    if (out / SPEC_FILE).is_file():
        saved = read_json(out / SPEC_FILE, ConfigError, "")
        if {key: saved.get(key) for key in SPEC_KEYS} != spec:
            raise ConfigError(f"{out} holds a recovery of another spec ({SPEC_FILE}): give a new "
                              "--out, or the same pool, roots, --k, --judge, --sub and --kinds")
        status = {e["id"]: e for e in saved.get("episodes", [])}
        for c in planned:
            c.status = status.get(c.id, {}).get("status", "pending")
            c.error = status.get(c.id, {}).get("error")
        return {**spec, "episodes": planned, "originals": saved.get("originals", {})}
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out} already holds files and no recovery: give --out a new folder")
    state = {**spec, "episodes": planned, "originals": {}}
    _save(out, state)
    return state


def _save(out: Path, state: dict[str, Any]) -> None:
    write_json_atomic(out / SPEC_FILE, json_safe(
        {**state, "episodes": [asdict(c) for c in state["episodes"]]}))


def _finished(run_dir: Path) -> bool:
    """True when the continuation in ``run_dir`` ended and was judged."""
    if not (run_dir / "config.json").is_file():
        return False
    folder = RunFolder.open(run_dir)
    return folder.scores() is not None and RunFolder.ended(folder.events())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text)[:60]


def _job(c: Continuation, p: Prefix, spec: dict[str, Any], out: Path,
         models_file: Path | None) -> dict[str, Any]:
    options = {} if spec["temperature"] is None else {"temperature": spec["temperature"]}
    sub = spec["sub"] or (p.sub if p.sub and seeded_parts(p.sub) else None)
    return {"id": c.id, "recovery": str(out), "source": p.run, "turn": p.turn,
            "out": str(out / c.run), "root": with_seed(c.root, c.sample),
            "sub": with_seed(sub, c.sample), "judge": spec["judge"], "options": options,
            "models_file": None if models_file is None else str(models_file)}


def play_continuation(job: dict[str, Any]) -> dict[str, Any]:
    """Play one continuation to its end and judge it (in a worker process): fork it, or
    resume it when an earlier attempt was interrupted, or only judge it when it ended."""
    out = Path(job["out"])
    models_file = Path(job["models_file"]) if job["models_file"] else None
    try:
        with job_lock(Path(job["recovery"]), job["id"]):
            _continue(job, out, models_file)
    except Exception as exc:  # noqa: BLE001 - a failing continuation is its result
        return {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    return {"status": "done"}


def _continue(job: dict[str, Any], out: Path, models_file: Path | None) -> None:
    """Fork, resume or judge the continuation in ``out``, whichever it still needs."""
    from dealroom.harness import fork_run, resume_run
    from dealroom.judge import judge_run

    if (out / "config.json").is_file():
        folder = RunFolder.open(out)
        if len(folder.events()) < folder.config.get("forked_from", {}).get("events", 0):
            shutil.rmtree(out)  # killed while copying the prefix: nothing of it played
    if not (out / "config.json").is_file():
        fork_run(job["source"], job["turn"], out, root=job["root"], sub=job["sub"],
                 models_file=models_file, **job["options"])
    elif not RunFolder.ended(RunFolder.open(out).events()):
        resume_run(out, models_file=models_file)
    if RunFolder.open(out).scores() is None:
        judge_run(out, job["judge"], models_file=models_file)


def _originals(prefixes: list[Prefix], known: dict[str, Any], judge: str,
               models_file: Path | None) -> dict[str, Any]:
    """Each source run's final deliverables judged by the continuations' judge (criteria
    passed); nothing is written into the source runs."""
    out = dict(known)
    for run in sorted({p.run for p in prefixes} - set(known)):
        try:
            scores = asyncio.run(_judge_original(Path(run), judge, models_file))
        except DealroomError as exc:
            out[run] = {"passed": None, "pass_rate": None, "error": str(exc)}
            continue
        passed = sorted(r.id for r in scores.criteria_results if r.verdict == "pass")
        out[run] = {"passed": passed, "pass_rate": scores.pass_rate}
    return out


async def _judge_original(run: Path, judge: str, models_file: Path | None) -> Scores:
    from dealroom.judge import open_judge, read_deliverables
    from dealroom.room import load_task

    room = RunFolder.open(run).room
    task = load_task(room)
    deliverables, _ = read_deliverables(run, task)
    async with open_judge(judge, models_file=models_file) as ready:
        check = getattr(ready, "check_task", None)
        if check is not None:
            check(task, str(room))
        return await ready(task, deliverables)


# -- the figures ---------------------------------------------------------------------------


def _report(prefixes: list[Prefix], episodes: list[Continuation], originals: dict[str, Any],
            out: Path, spec: dict[str, Any], tau: float) -> dict[str, Any]:
    """Per policy and kind: next-step quality, recovery rate, success (pass rate >= ``tau``),
    beating the original, Pass@k over the K continuations, final pass rate and turns used;
    and per pair of policies, paired on the same prefixes, the difference of pass rate and
    recovery with wins, losses and a sign test."""
    by_id = {p.id: p for p in prefixes}
    rows = [{"root": c.root, "prefix": c.prefix, "kind": by_id[c.prefix].kind,
             **outcome(by_id[c.prefix], out / c.run, originals.get(by_id[c.prefix].run, {}),
                       tau)}
            for c in episodes if c.status == "done" and c.prefix in by_id]
    kinds = sorted({p.kind for p in prefixes})
    policy = [_policy_row(root, kind, [r for r in rows if r["root"] == root
                                       and kind in ("all", r["kind"])], spec["k"])
              for root in spec["roots"] for kind in ["all", *kinds]]
    paired = [_pair(a, b, kind, rows) for a, b in itertools.combinations(spec["roots"], 2)
              for kind in ["all", *kinds]]
    nothing = sorted(p.id for p in prefixes
                     if originals.get(p.run, {}).get("passed") == [])
    return {"pool": spec["pool"], "judge": spec["judge"], "k": spec["k"], "roots": spec["roots"],
            "tau": tau, "prefixes": len(prefixes), "continuations": len(episodes),
            "original_passed_nothing": nothing,
            "failed": [asdict(c) for c in episodes if c.status == "failed"],
            "by_policy": policy, "paired": paired}


def outcome(prefix: Prefix, run_dir: Path, original: dict[str, Any],
            tau: float = DEFAULT_TAU) -> dict[str, Any]:
    """How one continuation went: ``next_step`` (turn j+1 ran without error and did not
    repeat the failure), ``recovered`` (its memo passes every criterion the original's
    passed; None when the original could not be judged or passed nothing, which any memo
    would "recover"), ``success`` (pass rate >= ``tau``), ``beat_original`` (a pass rate above
    the original's; None when that was not judged), ``pass_rate``, ``turns`` (after j)."""
    folder = RunFolder.open(run_dir)
    events = folder.events()
    scores = folder.scores() or {}
    passed = {r["id"] for r in scores.get("criteria_results", []) if r.get("verdict") == "pass"}
    before, rate = original.get("passed"), scores.get("pass_rate")
    end: dict[str, Any] = next((e for e in reversed(events)
                if e.get("type") == "run_end" and e.get("agent") == "root"), {})
    judged = isinstance(rate, int | float)
    return {"next_step": next_step_ok(events, prefix.turn, prefix.kind, prefix.harness),
            "recovered": set(before) <= passed if before else None,
            "success": judged and rate is not None and rate >= tau,
            "beat_original": None if original.get("pass_rate") is None or not judged
            else rate > original["pass_rate"],
            "original_passed_nothing": before == [],
            "pass_rate": rate,
            "turns": max(0, end.get("turns", prefix.turn) - prefix.turn)}


def next_step_ok(events: list[dict[str, Any]], turn: int, kind: str, harness: str) -> bool:
    """True when the root's turn ``turn + 1`` ran without error (its cell, or its tools) and
    did not repeat a failure of ``kind`` (a failed wave; no memo written when low on budget)."""
    step = turn + 1
    if step not in root_replies(events):
        return False
    mine = _turn_events(events, step)
    cells = [e for e in mine if e["type"] == "cell"]
    if harness == "rlm" and (not cells or any(c.get("error") for c in cells)):
        return False
    if any(e["type"] == "tool" and e.get("error") for e in mine):
        return False
    if kind == "failed_wave" and any(e["type"] == "wave" and e.get("failed") for e in mine):
        return False
    return not (kind == "low_budget" and not any(e["type"] == "memo" and e.get("sections")
                                                 for e in mine))


def _turn_events(events: list[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    """The root's own events from its model call of ``turn`` to its next one."""
    out, inside = [], False
    for e in events:
        if e.get("agent") != "root":
            continue
        if e.get("type") == "model_call" and e.get("role") == "root":
            inside = e["turn"] == turn
        if inside:
            out.append(e)
    return out


def _mean(values: Iterable[float | None]) -> float:
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else math.nan


def _policy_row(root: str, kind: str, rows: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """One policy on one kind; ``recovery`` leaves out the prefixes whose original passed
    nothing (counted in ``original_passed_nothing``); ``pass_at_k[str(k)]`` is the mean over
    prefixes of the unbiased Pass@k of their continuations' successes."""
    by_prefix: dict[str, list[bool]] = {}
    for r in rows:
        by_prefix.setdefault(r["prefix"], []).append(r["success"])
    return {"root": root, "kind": kind, "prefixes": len(by_prefix),
            "continuations": len(rows), "next_step": _mean([r["next_step"] for r in rows]),
            "recovery": _mean([r["recovered"] for r in rows]),
            "original_passed_nothing": len({r["prefix"] for r in rows
                                            if r["original_passed_nothing"]}),
            "success": _mean([r["success"] for r in rows]),
            "beat_original": _mean([r["beat_original"] for r in rows]),
            "pass_at_k": {str(n): mean_pass_at_k(list(by_prefix.values()), n)[0]
                          for n in range(1, k + 1)},
            "pass_rate": _mean([r["pass_rate"] for r in rows]),
            "turns": _mean([r["turns"] for r in rows])}


def _pair(a: str, b: str, kind: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """B against A on the prefixes both continued: per prefix the mean over its samples."""
    def per_prefix(root: str, key: str) -> dict[str, float]:
        mine = [r for r in rows if r["root"] == root and kind in ("all", r["kind"])]
        return {p: _mean([r[key] for r in mine if r["prefix"] == p])
                for p in {r["prefix"] for r in mine}}

    rate_a, rate_b = per_prefix(a, "pass_rate"), per_prefix(b, "pass_rate")
    rec_a, rec_b = per_prefix(a, "recovered"), per_prefix(b, "recovered")
    both = sorted(p for p in set(rate_a) & set(rate_b)
                  if not (math.isnan(rate_a[p]) or math.isnan(rate_b[p])))
    diffs = [rate_b[p] - rate_a[p] for p in both]
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    return {"a": a, "b": b, "kind": kind, "pairs": len(both), "mean_diff": _mean(diffs),
            "recovery_diff": _mean([rec_b[p] - rec_a[p] for p in both
                                    if not (math.isnan(rec_a[p]) or math.isnan(rec_b[p]))]),
            "wins": wins, "losses": losses, "ties": len(diffs) - wins - losses,
            "p_value": sign_test(diffs)}
