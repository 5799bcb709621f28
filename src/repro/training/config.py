"""`TrainConfig`: every setting of one training run, checked when it is made.

The fields' types, ranges and allowed values are in `train_config.schema.yaml` beside this module
(the pipeline's config schema refers to it); a config checks itself against that file, then checks
the relations between fields. Each invalid value raises `TrainConfigError` whose message names the
field and says what is allowed.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro import schemas
from repro.training import schedules
from repro.training.schedules import Schedule

if TYPE_CHECKING:  # torch loads on first use: the workflow builds TrainConfigs to check a config
    import torch

# Fields that say *how* a run is executed, not *what* it computes: changing them does
# not invalidate a checkpoint. (The CPU thread count can change float rounding, but a
# resumed job must be free to get a different `threads:` from Snakemake.)
EXECUTION_FIELDS = ("threads", "device", "checkpoint_every", "log_gains")
#: Fields left out of a run's identity while unset, so that adding them kept every earlier run's hash.
UNSET_LEFT_OUT = ("stop_at_eval_loss", "cooldown_fraction")


#: Training precisions: "fp32", or "bf16" autocast (weights, optimizer state and gradients stay fp32).
#: fp16 is not offered: it needs loss scaling, and bf16 has fp32's exponent range without it.
PRECISIONS = {"fp32": None, "bf16": "bfloat16"}
SCHEMA_FILE = Path(__file__).with_name("train_config.schema.yaml")


class TrainConfigError(ValueError):
    """An invalid training setting; the message names the field and the allowed values."""


def precision_dtype(precision: str) -> torch.dtype | None:
    """The autocast dtype of a training precision (PRECISIONS), None for fp32."""
    import torch

    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not one of {sorted(PRECISIONS)}")
    name = PRECISIONS[precision]
    return None if name is None else getattr(torch, name)


def resolve_device(name: str) -> torch.device:
    """A torch device from a config string; "auto" is cuda when a GPU is visible, else cpu."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _fail(name: str, value: Any, allowed: str) -> None:
    raise TrainConfigError(f"TrainConfig.{name} is {value!r}; {allowed}")


@dataclass
class TrainConfig:
    """Settings of one run.

    steps               number of optimizer updates (with `time_budget_s`: the most updates)
    batch_size          examples per update
    lr                  peak learning rate
    schedule            one of SCHEDULES (see repro.training.schedules)
    warmup_steps        warmup length in updates, or
    warmup_fraction     warmup length as a fraction of training (required with time_budget_s)
    min_lr              final LR of linear, cosine and triangular (HF polynomial lr_end = 1e-7)
    warmup_init_lr      first LR of inverse_sqrt (fairseq --warmup-init-lr)
    peak_fraction       where triangular peaks, as a fraction of training
    weight_decay, betas, eps   AdamW; no decay on gains, biases and norms (repro.training.optim)
    grad_clip           global gradient-norm clip, None for none
    lr_multipliers      {regex: factor}: LR factor for parameters whose name matches
    eval_every          evaluate every this many updates (0: only at the end)
    log_every           write a metrics row every this many updates (and at every evaluation)
    seed                seeds data order, masking and dropout (model init is seeded by its builder)
    threads             torch.set_num_threads
    checkpoint_every    resumable checkpoint every this many updates (0: only at the end)
    keep_checkpoints_at updates after which the weights are kept as snapshots/step-XXXXXX.safetensors
    time_budget_s       stop when this much training time has elapsed; the schedule then follows
                        the elapsed fraction of the budget instead of the step count
    stop_at_eval_loss   stop at the first evaluation whose held-out loss is at most this (early
                        stopping at a health level, the same for every seed); `steps` is then the
                        most updates and still the schedule's length. None: run all `steps`
    cooldown_fraction   with stop_at_eval_loss: a run that reaches the level at update k goes on
                        for ceil(f * k) more updates, its learning rate falling linearly from that
                        of update k towards zero, and ends there. None: it stops at update k
    device              torch device of the model and batches; "auto" picks cuda when a GPU is
                        visible and cpu otherwise (`resolve_device`)
    precision           "fp32", or "bf16": the forward and backward passes of training run under
                        torch.autocast in bfloat16 (mixed precision for GPUs; weights, optimizer
                        state and evaluation stay fp32)
    log_gains           also write the values of every trainable parameter whose name contains
                        "gain" into each metrics row (key "gains": {name: [values]}); logging only,
                        so it is an execution field and does not change what the run computes
    init_from           what the model's starting weights were loaded from (e.g. a pretrained
                        checkpoint's name and the hash of its converted weights), None for a fresh
                        initialisation. The caller loads the weights before `train` (see
                        `repro.training.checkpoint.load_initial_weights`); the label is part of the
                        run's identity, so a run never resumes from a checkpoint of another start.
    """

    steps: int
    batch_size: int
    lr: float
    schedule: str = "linear"
    warmup_steps: int | None = None
    warmup_fraction: float | None = None
    min_lr: float = 1e-7
    warmup_init_lr: float = 1e-7
    peak_fraction: float = 0.75
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    grad_clip: float | None = 1.0
    lr_multipliers: dict[str, float] = field(default_factory=dict)
    eval_every: int = 0
    log_every: int = 10
    seed: int = 0
    threads: int = 1
    checkpoint_every: int = 0
    keep_checkpoints_at: tuple[int, ...] = ()
    time_budget_s: float | None = None
    stop_at_eval_loss: float | None = None
    cooldown_fraction: float | None = None
    device: str = "cpu"
    precision: str = "fp32"
    log_gains: bool = False
    init_from: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.betas, list):
            self.betas = tuple(self.betas)
        if isinstance(self.keep_checkpoints_at, (list, set, range)):
            self.keep_checkpoints_at = tuple(self.keep_checkpoints_at)
        self.lr_multipliers = dict(self.lr_multipliers)
        self._check_fields()
        self._check_relations()
        self.keep_checkpoints_at = tuple(sorted(set(self.keep_checkpoints_at)))

    # -- validation ---------------------------------------------------------------------
    def _check_fields(self) -> None:
        """Each field against the schema (types, ranges, allowed values)."""
        problems = schemas.field_problems(self, SCHEMA_FILE, prefix="TrainConfig.")
        if problems:
            raise TrainConfigError("; ".join(problems))

    def _check_relations(self) -> None:
        """What the schema cannot say: the relations between fields, and that patterns are regexes."""
        for pattern in self.lr_multipliers:
            try:
                re.compile(pattern)
            except (re.error, TypeError) as err:
                _fail("lr_multipliers", pattern, f"its keys must be regular expressions ({err})")
        if self.warmup_steps is not None and self.warmup_fraction is not None:
            _fail("warmup_steps", self.warmup_steps, "give warmup_steps or warmup_fraction, not both")
        if self.warmup_steps is not None:
            if self.warmup_steps >= self.steps:
                _fail("warmup_steps", self.warmup_steps, f"it must be less than steps={self.steps}")
            if self.time_budget_s is not None:
                _fail(
                    "warmup_steps",
                    self.warmup_steps,
                    "with time_budget_s the schedule follows the clock; give warmup_fraction",
                )
        if self.schedule == "triangular" and (self.warmup_steps or self.warmup_fraction):
            _fail(
                "schedule",
                self.schedule,
                "'triangular' rises to its peak at peak_fraction; leave warmup_steps/warmup_fraction unset",
            )
        if self.schedule == "inverse_sqrt" and self.warmup() <= 0:
            _fail("schedule", self.schedule, "'inverse_sqrt' needs a positive warmup_steps or warmup_fraction")
        for name in ("min_lr", "warmup_init_lr"):
            if getattr(self, name) > self.lr:
                _fail(name, getattr(self, name), f"it must be at most lr={self.lr}")
        if self.stop_at_eval_loss is not None and self.eval_every == 0:
            _fail("stop_at_eval_loss", self.stop_at_eval_loss, "the run stops at an evaluation: give eval_every > 0")
        if self.cooldown_fraction is not None and self.stop_at_eval_loss is None:
            _fail(
                "cooldown_fraction", self.cooldown_fraction, "a cool-down follows an early stop: give stop_at_eval_loss"
            )
        late = [step for step in self.keep_checkpoints_at if step > self.steps]
        if late:
            _fail(
                "keep_checkpoints_at", self.keep_checkpoints_at, f"{late} are after the last step, steps={self.steps}"
            )

    # -- derived ------------------------------------------------------------------------
    def warmup(self) -> float:
        """The warmup as a fraction of training."""
        return schedules.warmup_fraction(
            warmup_steps=self.warmup_steps, warmup_fraction=self.warmup_fraction, total_steps=self.steps
        )

    def build_schedule(self) -> Schedule:
        """progress in [0, 1] -> multiplier of `lr` (see repro.training.schedules)."""
        return schedules.build_schedule(
            self.schedule,
            lr=self.lr,
            warmup=self.warmup(),
            min_lr=self.min_lr,
            warmup_init_lr=self.warmup_init_lr,
            peak_fraction=self.peak_fraction,
        )

    def to_dict(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["betas"] = list(self.betas)
        values["keep_checkpoints_at"] = list(self.keep_checkpoints_at)
        return values

    def result_fields(self) -> dict[str, Any]:
        """The settings that determine what the run computes (all but EXECUTION_FIELDS, and the
        UNSET_LEFT_OUT fields while they are None)."""
        return {
            k: v
            for k, v in self.to_dict().items()
            if k not in EXECUTION_FIELDS and not (k in UNSET_LEFT_OUT and v is None)
        }

    @property
    def autocast_dtype(self) -> torch.dtype | None:
        """The autocast dtype of training passes, None for fp32."""
        return precision_dtype(self.precision)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        """Build from plain JSON/YAML values, rejecting unknown keys by name."""
        allowed = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(allowed))
        if unknown:
            raise TrainConfigError(f"TrainConfig: unknown key(s) {unknown}; allowed keys: {', '.join(allowed)}")
        missing = [name for name in ("steps", "batch_size", "lr") if name not in values]
        if missing:
            raise TrainConfigError(f"TrainConfig: missing required key(s) {missing}")
        return cls(**values)
