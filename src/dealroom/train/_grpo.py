"""GRPO on the root inside the harness, sub-agents frozen: rollouts, reward, LoRA update.

    SPEC.toml ─▶ GRPOSpec (policy, frozen sub, judge, rooms, [grpo] GRPOSettings)
    per step:  collect groups (_grpo_step) ─▶ BudgetMix audit ─▶ update ─▶ CKPT/log.jsonl row
    CKPT/ train.json          what is trained, from what, with which spec
          rollouts/step-S/..  every rollout: an ordinary run folder (judged)
          rollouts.jsonl      every rollout as it finished: --resume reuses the current step's
          budgetmix-plan.json the plan of the groups' budgets (with --budgetmix)
          watch.jsonl         signs of a policy going around the task (``_watch``)
          checkpoint-N/       every save_every steps: adapter, optimizer, state (--resume)
          eval/step-N/        held-out sweeps (eval_every)
          adapter_config.json, adapter_model.safetensors   the result: hf:CKPT

Two engines update the policy from the same rollouts: this module's own loop over the PEFT
model in torch (the loss in ``_grpo_loss``; the default), or TRL's GRPOTrainer through its
``rollout_func`` (``_grpo_trl``, ``engine = "trl"``): see docs/training.md, "GRPO: the
engines".
"""

from __future__ import annotations

import json
import random
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import write_json_atomic, write_text_atomic
from dealroom._util.secrets import redact_secrets
from dealroom.errors import ConfigError, DealroomError
from dealroom.harness import label_specs
from dealroom.runs import append_jsonl, read_jsonl
from dealroom.train._grpo_settings import GRPOSettings, GRPOSpec, check_spec, load_grpo_spec
from dealroom.train._grpo_step import (
    ROLLOUTS,
    Group,
    StepContext,
    collect,
    sample_ahead,
    update,
)
from dealroom.train._reward import OLD_NAMES, reward_of
from dealroom.train._rollout import CRASHED, JUDGE_ERROR, POLICY, UNTRAINABLE, Rollout, policy_as
from dealroom.train._settings import lora_config
from dealroom.train._watch import (
    WATCH,
    Sign,
    TrainingWatchError,
    plant_canaries,
    step_signs,
)

if TYPE_CHECKING:
    import torch
    from peft import PeftModel

    from dealroom.eval import BudgetMixPlan
    from dealroom.judge import Judge
    from dealroom.models import LoadedModel

LOG = "log.jsonl"
PLAN = "budgetmix-plan.json"
GRPO_VERSION = 1


class BudgetMixViolation(DealroomError):
    """A step's rollouts did not follow the BudgetMix plan: training stops."""


@dataclass
class GRPOResult:
    """What ``train_grpo`` produced."""

    out: Path
    """The checkpoint folder (a PEFT adapter: ``hf:CKPT``)."""
    steps: int
    """Steps done, resumed ones included."""
    log: list[dict[str, Any]]
    """The rows of ``CKPT/log.jsonl``."""
    seconds: float


def train_grpo(spec: GRPOSpec | Path, out: Path, *, resume: bool = False,
               budgetmix: list[int] | None = None, judge: Judge | None = None,
               progress: Callable[[int, int], None] | None = None,
               on_rollout: Callable[[Rollout], None] | None = None,
               on_sign: Callable[[Sign], None] | None = None) -> GRPOResult:
    """Train ``spec``'s root with GRPO into ``out`` (see the module docstring).

    ``spec``: a GRPOSpec or the path of its SPEC.toml; ``budgetmix``: turn budgets replacing
    the spec's; ``judge``: a Judge object used instead of ``spec.judge``; ``resume``:
    continue the training in ``out`` from its last checkpoint; ``progress(step, steps)``
    after each step, ``on_rollout(rollout)`` after each rollout, ``on_sign(sign)`` for each
    sign the watch sees (``CKPT/watch.jsonl``; ``stop_on_watch`` raises TrainingWatchError)."""
    from dealroom.train._sft import _require_extra, _require_reporter

    started = time.perf_counter()
    base = Path.cwd()
    if not isinstance(spec, GRPOSpec):
        spec, base = load_grpo_spec(Path(spec), budgetmix=budgetmix)
    elif budgetmix is not None:
        spec = spec.model_copy(update={"budgetmix": tuple(budgetmix)})
    check_spec(spec)
    if judge is not None and spec.grpo.remote_rollouts:
        raise ConfigError("rollouts in worker processes or Ray tasks are judged there: give "
                          "the judge by name (the spec's judge), not as an object")
    if spec.grpo.rollout_backend == "ray":
        from dealroom.eval import import_ray

        import_ray()  # a missing extra is named before any work
    _require_extra()
    for reporter in set(spec.grpo.reporters()) - {"none"}:
        _require_reporter(reporter)
    out = Path(out).resolve()
    start = _prepare_out(out, spec, resume)
    rooms = _rooms(spec, base, out)
    for room in rooms:  # the watch flags any rollout whose records hold one
        plant_canaries(Path(room))
    plan = _plan(spec, rooms, out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model, loaded, optimizer = _policy(spec, out, 0 if spec.grpo.engine == "trl" else start)
    ctx = StepContext(spec, out, loaded, rooms, plan, judge, _done(out, start), on_rollout)
    if spec.grpo.engine == "trl":
        _trl_loop(ctx, model, start, resume, on_sign, progress)
    else:
        _own_loop(ctx, model, optimizer, start, base, on_sign, progress)
    model.save_pretrained(str(out))
    record = json.loads((out / "train.json").read_text(encoding="utf-8"))
    write_json_atomic(out / "train.json", {**record, "status": "done",
                                           "steps": spec.grpo.steps})
    return GRPOResult(out, spec.grpo.steps, list(read_jsonl(out / LOG)),
                      time.perf_counter() - started)


def _own_loop(ctx: StepContext, model: Any, optimizer: torch.optim.Optimizer, start: int,
              base: Path, on_sign: Callable[[Sign], None] | None,
              progress: Callable[[int, int], None] | None) -> None:
    """dealroom's engine: per step, rollouts, audit, one update, checkpoint, evaluation. When
    anything fails, the rollouts sampled ahead are stopped before the error goes up."""
    spec, out = ctx.spec, ctx.out
    reporter = _Reporter(spec.grpo.reporters(), out)
    heldout = _last_heldout(out)
    ahead: _Ahead | None = None
    try:
        for step in range(start, spec.grpo.steps):
            row, ahead = _step(ctx, model, optimizer, step, ahead)
            evaluate = bool(spec.grpo.eval_every) and (step + 1) % spec.grpo.eval_every == 0
            if (step + 1) % spec.grpo.save_every == 0 or step + 1 == spec.grpo.steps or evaluate:
                _save(out, model, optimizer, step + 1, spec)
            if evaluate and spec.heldout:
                row["heldout_pass_rate"] = heldout = _evaluate(spec, base, out, step + 1)
            signs = _watch(ctx, step, row, heldout, on_sign)
            append_jsonl(out / LOG, row)
            reporter.log(row)
            if signs and spec.grpo.stop_on_watch:
                raise _watch_error(step, signs, out)
            if progress is not None:
                progress(step + 1, spec.grpo.steps)
    except BaseException:
        if ahead is not None:
            ahead.stop()
        raise


def _trl_loop(ctx: StepContext, model: Any, start: int, resume: bool,
              on_sign: Callable[[Sign], None] | None,
              progress: Callable[[int, int], None] | None) -> None:
    """TRL's engine over the same rollouts, audit and watch (see ``_grpo_trl``)."""
    from dealroom.train._grpo_trl import train_with_trl

    signs: dict[int, list[Sign]] = {}

    def watch(step: int, groups: list[Group]) -> dict[str, Any]:
        row = step_figures(groups)
        signs[step + 1] = _watch(ctx, step, row, None, on_sign)
        return row

    def log_row(row: dict[str, Any]) -> None:
        append_jsonl(ctx.out / LOG, row)
        found = signs.pop(row["step"], [])
        if found and ctx.spec.grpo.stop_on_watch:
            raise _watch_error(row["step"] - 1, found, ctx.out)

    train_with_trl(ctx, model, start, resume, lambda step: _audit(ctx, step), watch, log_row,
                   progress)


def _step(ctx: StepContext, model: Any, optimizer: torch.optim.Optimizer, step: int,
          ahead: _Ahead | None) -> tuple[dict[str, Any], _Ahead | None]:
    """Rollouts (waiting for those sampled ahead), audit, then the update, during which the
    next step's first groups are sampled when ``async_rollouts`` asks for it."""
    clock = time.perf_counter()
    groups = collect(ctx, step, ahead.result() if ahead else None)
    rollout_s = time.perf_counter() - clock
    _audit(ctx, step)
    settings = ctx.spec.grpo
    upcoming = _Ahead(ctx, step + 1) if settings.async_rollouts and step + 1 < settings.steps \
        else None
    clock = time.perf_counter()
    try:
        figures = update(model, optimizer, groups, settings, step)
    except BaseException:
        if upcoming is not None:
            upcoming.stop()
        raise
    train_s = time.perf_counter() - clock
    return ({"step": step + 1, **step_figures(groups), **figures,
             "learning_rate": settings.learning_rate, "rollout_s": round(rollout_s, 3),
             "train_s": round(train_s, 3), "step_s": round(rollout_s + train_s, 3)}, upcoming)


class _Ahead:
    """The next step's first groups, sampled in a daemon thread (its rollouts run in worker
    processes or Ray tasks, or here side by side) while the update runs; a failure is
    raised by :meth:`result`, and :meth:`stop` ends the sampling."""

    def __init__(self, ctx: StepContext, step: int) -> None:
        self._groups: list[Group] | None = None
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(replace(ctx, stop=self._stop),
                                                                step),
                                        daemon=True, name=f"grpo-ahead-{step + 1}")
        self._thread.start()

    def _run(self, ctx: StepContext, step: int) -> None:
        try:
            self._groups = sample_ahead(ctx, step)
        except BaseException as exc:  # noqa: BLE001 - handed to the trainer in result()
            self._error = exc

    def result(self) -> list[Group]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._groups or []

    def stop(self) -> None:
        """Kill the rollouts running in workers, cancel one running in this process, start
        none more, and wait for the thread (finished rollouts are kept for a resume)."""
        self._stop.set()
        self._thread.join()


def _audit(ctx: StepContext, step: int) -> None:
    """The BudgetMix audit of the step's rollouts; a violation stops training."""
    from dealroom.eval import audit_budgetmix

    if ctx.plan is None:
        return
    audit = audit_budgetmix(ctx.plan, _audited(ctx, step))
    bad = [f"{Path(r.run).name}: {v}" for r in audit.runs for v in r.violations]
    if bad:
        raise BudgetMixViolation(f"step {step + 1}: the rollouts broke the BudgetMix plan "
                                 f"({len(bad)} violations; first: {bad[0]}); training stopped")


def _watch_error(step: int, signs: list[Sign], out: Path) -> TrainingWatchError:
    return TrainingWatchError(f"step {step + 1}: the watch saw {len(signs)} sign(s) of a policy "
                              f"going around the task; first: {signs[0].kind}: "
                              f"{signs[0].detail} (see {out / WATCH})")


def _watch(ctx: StepContext, step: int, row: dict[str, Any], heldout: float | None,
           on_sign: Callable[[Sign], None] | None) -> list[Sign]:
    """Look for the step's signs, write them to CKPT/watch.jsonl and count them in ``row``."""
    signs = step_signs(step + 1, _audited(ctx, step), row.get("pass_rate"), heldout,
                       ctx.spec.grpo.watch_gap, decode=_decoder(ctx))
    row["hidden_touches"] = sum(s.kind == "hidden_touch" for s in signs)
    row["reward_gap"] = None if heldout is None or row.get("pass_rate") is None \
        else round(row["pass_rate"] - heldout, 4)
    for sign in signs:
        append_jsonl(ctx.out / WATCH, sign.to_dict())
        if on_sign is not None:
            on_sign(sign)
    return signs


def _decoder(ctx: StepContext) -> Callable[[list[int]], str]:
    """The policy's tokenizer as the watch reads ``tokens.jsonl`` with it."""
    tokenizer = ctx.loaded.tokenizer
    return lambda ids: str(tokenizer.decode(ids))


def _last_heldout(out: Path) -> float | None:
    """The latest held-out pass rate in the log (a resumed training keeps comparing to it)."""
    rows = read_jsonl(out / LOG) if (out / LOG).is_file() else []
    rates = [row["heldout_pass_rate"] for row in rows if row.get("heldout_pass_rate") is not None]
    return rates[-1] if rates else None


def _audited(ctx: StepContext, step: int) -> list[Path]:
    """Every run folder of the step's rollouts that exists (crashed ones included)."""
    folder = ctx.out / "rollouts" / f"step-{step + 1:04d}"
    return sorted(p for p in folder.glob("g*/r*") if (p / "config.json").is_file())


def _mean(values: list[Any]) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def step_figures(groups: list[Group]) -> dict[str, Any]:
    """The rollout side of a log row (see docs/training.md, "Logged metrics")."""
    rollouts = [r for g in groups for r in g.rollouts]
    rewarded = [r for r in rollouts if r.reward is not None]
    rewards = [r.reward for r in rewarded if r.reward is not None]
    passed = [r.terms.get("pass", r.reward or 0.0) for r in rewarded]  # logged before terms
    mean = _mean(rewards)
    std = (None if mean is None else
           (sum((r - mean) ** 2 for r in rewards) / len(rewards)) ** 0.5)
    names = sorted({name for r in rewarded for name in r.terms})
    metric = [r.metrics for r in rollouts if r.metrics]
    memo = [m["memo_incremental"] for m in metric if m.get("memo_incremental") is not None]
    kept = [g for g in groups if g.fate == "kept"]
    return {
        "reward_mean": mean, "reward_std": std,
        **{f"reward_{name}": _mean([r.terms.get(name) for r in rewarded]) for name in names},
        "pass_rate": _mean(passed), "all_pass": _mean([float(p == 1.0) for p in passed]),
        "coverage": _mean([m.get("coverage") for m in metric]),
        "sub_calls": _mean([m.get("sub_calls") for m in metric]),
        "waves": _mean([m.get("waves") for m in metric]),
        "largest_wave": max((m.get("max_wave", 0) for m in metric), default=0),
        "memo_incremental_rate": _mean([float(bool(m)) for m in memo]),
        "root_tokens": sum(m.get("root_tokens", 0) for m in metric),
        "rollouts": len(rollouts), "groups": len(kept),
        "groups_dropped": sum(g.fate == "dropped" for g in groups),
        "groups_lost": sum(g.fate == "lost" for g in groups),
        "crashed": sum(len(g.crashed) for g in groups),
        "judge_errors": sum(r.status == JUDGE_ERROR for r in rollouts),
        "untrainable": sum(r.status == UNTRAINABLE for r in rollouts),
        "budgets": sorted({g.max_turns for g in kept}),
    }


# -- the folder, the rooms, the policy ----------------------------------------------------------


def _record(spec: GRPOSpec) -> dict[str, Any]:
    """``train.json``: what is trained, from what, with which spec, and which endpoint and
    model the frozen sub-agents are (as a run's ``config.json`` records it)."""
    from dealroom.models import model_record, resolve_model_spec

    first = label_specs(spec.sub)[0]  # the default sub-agent; policy: the root's model
    sub = model_record(resolve_model_spec(spec.model, role="root") if first == POLICY
                       else resolve_model_spec(first, role="sub"))
    return {"version": GRPO_VERSION, "kind": "grpo", "base": spec.model,
            "spec": redact_secrets(json.loads(json.dumps(spec.to_dict()))),
            "models": {"sub": sub}}


def _prepare_out(out: Path, spec: GRPOSpec, resume: bool) -> int:
    """Refuse a used folder (or a resume that does not match); the step to start from."""
    if not resume:
        if out.exists() and any(out.iterdir()):
            raise ConfigError(f"{out} already holds files: choose a new --out folder, or "
                              "continue that training with --resume")
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / "train.json", {**_record(spec), "status": "running"})
        return 0
    try:
        stored = json.loads((out / "train.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ConfigError(f"{out} holds no train.json: nothing to resume") from None
    if redact_secrets(_with_new_settings(stored.get("spec"))) != _record(spec)["spec"]:
        raise ConfigError(f"--resume: the spec differs from the training in {out}; resume "
                          "with the same SPEC.toml and flags")
    step = last_checkpoint(out)
    _cut(out / LOG, lambda row: row["step"] <= step)
    _cut(out / ROLLOUTS, lambda row: row["step"] <= step)
    _cut(out / WATCH, lambda row: row["step"] <= step)
    return step


def _with_new_settings(stored: Any) -> Any:
    """A stored spec with the ``[grpo]`` settings added since it was written at their
    defaults, so a training started before them still resumes."""
    if not isinstance(stored, dict) or not isinstance(stored.get("grpo"), dict):
        return stored
    defaults = GRPOSettings().to_dict()
    grpo = {**{k: v for k, v in defaults.items() if k not in stored["grpo"]}, **stored["grpo"]}
    if isinstance(grpo.get("reward"), str):  # the reward's old name (headline: pass)
        grpo["reward"] = OLD_NAMES.get(grpo["reward"], grpo["reward"])
    return {**stored, "grpo": grpo}


def last_checkpoint(out: Path) -> int:
    """The step of the newest complete ``checkpoint-N`` (0 when none)."""
    done = [int(p.name.split("-")[1]) for p in out.glob("checkpoint-*")
            if (p / "state.json").is_file()]
    return max(done, default=0)


def _cut(path: Path, keep: Callable[[dict[str, Any]], bool]) -> None:
    if path.is_file():
        rows = [row for row in read_jsonl(path) if keep(row)]
        write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in rows))


def _done(out: Path, step: int) -> dict[tuple[int, int, int, int], Rollout]:
    """The rollouts of ``step`` finished before a kill: a resume reuses them."""
    rows = read_jsonl(out / ROLLOUTS) if (out / ROLLOUTS).is_file() else []
    found = {}
    for row in rows:
        rollout = Rollout(**row)
        if rollout.step == step and (rollout.status == CRASHED
                                     or (Path(rollout.run) / "scores.json").is_file()):
            found[(rollout.step, rollout.slot, rollout.index, rollout.attempt)] = rollout
    return found


def _rooms(spec: GRPOSpec, base: Path, out: Path) -> list[str]:
    from dealroom.eval import expand_rooms
    from dealroom.room import generate_room

    rooms = expand_rooms([p if Path(p).is_absolute() else str(base / p) for p in spec.rooms]) \
        if spec.rooms else []
    for gen in spec.generate:
        path = out / "rooms" / gen.folder_name()
        if not (path / "room.json").is_file():
            generate_room(path, docs=gen.docs, seed=gen.seed, profile=gen.profile,
                          tokens=gen.tokens, secret=gen.secret)
        rooms.append(str(path.resolve()))
    return rooms


def _plan(spec: GRPOSpec, rooms: list[str], out: Path) -> BudgetMixPlan | None:
    from dealroom.eval import BudgetMixPlan, make_budgetmix_plan

    if not spec.budgetmix:
        return None
    settings = spec.grpo
    plan = make_budgetmix_plan(list(spec.budgetmix), settings.groups + settings.extra_groups,
                               list(rooms), settings.steps, settings.seed)
    if (out / PLAN).is_file():
        stored = BudgetMixPlan.load(out / PLAN)
        if stored.id != plan.id:
            raise ConfigError(f"{out / PLAN} is another plan than this spec makes")
        return stored
    plan.save(out / PLAN)
    return plan


def _policy(spec: GRPOSpec, out: Path,
            step: int) -> tuple[PeftModel, LoadedModel, torch.optim.Optimizer]:
    """The PEFT policy (new LoRA, or the checkpoint's), its LoadedModel and optimizer."""
    import torch
    from peft import PeftModel, get_peft_model

    from dealroom.models import LoadedModel, load_hf_model

    settings = spec.grpo
    loaded = load_hf_model(spec.model)
    torch.manual_seed(settings.seed)
    random.seed(settings.seed)
    if step:
        model = PeftModel.from_pretrained(loaded.model, str(out / f"checkpoint-{step}"),
                                          is_trainable=True)
    else:
        model = get_peft_model(loaded.model, lora_config(settings))
    if settings.activation_checkpointing:  # only in train mode: rollouts sample as before
        enable_checkpointing(model)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                  lr=settings.learning_rate, weight_decay=settings.weight_decay)
    if step:
        optimizer.load_state_dict(torch.load(out / f"checkpoint-{step}" / "optimizer.pt",
                                             map_location=loaded.device))
    model.eval()
    return model, LoadedModel(model, loaded.tokenizer, loaded.device), optimizer


def enable_checkpointing(model: Any) -> None:
    """Activation checkpointing on ``model``'s layers (non-reentrant: no input gradients
    needed under LoRA), by either name transformers has given it."""
    enable = getattr(model, "activation_checkpointing_enable", None)
    if enable is not None:
        enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:  # transformers before 5.2x
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def _save(out: Path, model: Any, optimizer: torch.optim.Optimizer, step: int,
          spec: GRPOSpec) -> None:
    import torch

    folder = out / f"checkpoint-{step}"
    model.save_pretrained(str(folder))
    torch.save(optimizer.state_dict(), folder / "optimizer.pt")
    write_json_atomic(folder / "train.json", {**_record(spec), "status": "checkpoint",
                                              "steps": step})
    write_json_atomic(folder / "state.json", {"step": step})  # last: marks it complete


def _evaluate(spec: GRPOSpec, base: Path, out: Path, step: int) -> float | None:
    """The held-out pass rate of checkpoint ``step``, by an evaluation sweep in its own
    process (``dealroom eval sweep``: its own memory, and no re-import of the caller's
    ``__main__`` by the pool's spawned workers); None when the sweep fails."""
    import subprocess
    import sys

    from dealroom.eval import summarize_runs
    from dealroom.runs import find_runs

    folder = out / "eval" / f"step-{step}"
    folder.mkdir(parents=True, exist_ok=True)
    rooms = [p if Path(p).is_absolute() else str(base / p) for p in spec.heldout]
    turns = max(spec.budgetmix) if spec.budgetmix else spec.grpo.max_turns
    root = f"hf:{out / f'checkpoint-{step}'},max_tokens={spec.grpo.max_new_tokens}"
    body = {"rooms": rooms, "harness": spec.harness, "roots": [root],
            "subs": [policy_as(spec.sub, root)], "max_turns": [turns], "judge": spec.judge,
            "settings": spec.settings}
    write_text_atomic(folder / "SPEC.toml", _toml(body))
    done = subprocess.run([sys.executable, "-m", "dealroom", "eval", "sweep",
                           str(folder / "SPEC.toml"), "--out", str(folder / "sweep"),
                           "--workers", "1"], capture_output=True, text=True)
    write_text_atomic(folder / "sweep.log", done.stdout + done.stderr)
    if done.returncode != 0:
        return None
    totals = summarize_runs(find_runs([folder / "sweep"]))["totals"]
    figure = reward_of(spec.grpo.reward).pass_figure
    return totals.get("headline_mean" if figure == "headline" else "pass_rate_mean")


def _toml(body: dict[str, Any]) -> str:
    lines = []
    for key, value in body.items():
        if key != "settings":
            lines.append(f"{key} = {json.dumps(value)}")
    lines.append("[settings]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in body["settings"].items()]
    return "\n".join(lines) + "\n"


class _Reporter:
    """TensorBoard and W&B, when ``report_to`` asks for them."""

    def __init__(self, names: list[str], out: Path) -> None:
        self.writers: list[Callable[[dict[str, float], int], None]] = []
        if "tensorboard" in names:
            from torch.utils.tensorboard import SummaryWriter

            writer = SummaryWriter(str(out / "tensorboard"))

            def to_tensorboard(row: dict[str, float], step: int) -> None:
                for key, value in row.items():
                    writer.add_scalar(key, value, step)
                writer.flush()

            self.writers.append(to_tensorboard)
        if "wandb" in names:
            import wandb

            run = wandb.init(project="dealroom-grpo", dir=str(out), resume="allow")
            self.writers.append(lambda row, step: run.log(row, step=step))

    def log(self, row: dict[str, Any]) -> None:
        numbers = {k: float(v) for k, v in row.items()
                   if isinstance(v, int | float) and not isinstance(v, bool) and k != "step"}
        for write in self.writers:
            write(numbers, row["step"])
