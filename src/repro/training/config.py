"""`TrainConfig`: every setting of one training run, checked when it is made.

Each invalid value raises `TrainConfigError` whose message starts with the field
name and says what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from repro.training import schedules
from repro.training.schedules import SCHEDULES, Schedule

if TYPE_CHECKING:  # torch loads on first use: the workflow builds TrainConfigs to check a config
    import torch

# Fields that say *how* a run is executed, not *what* it computes: changing them does
# not invalidate a checkpoint. (The CPU thread count can change float rounding, but a
# resumed job must be free to get a different `threads:` from Snakemake.)
EXECUTION_FIELDS = ("threads", "device", "checkpoint_every", "log_gains")


#: Training precisions: "fp32", or "bf16" autocast (weights, optimizer state and gradients stay fp32).
#: fp16 is not offered: it needs loss scaling, and bf16 has fp32's exponent range without it.
PRECISIONS = {"fp32": None, "bf16": "bfloat16"}
#: Device strings a config may name: "auto", or a torch device type with an optional index ("cuda:1").
DEVICE_PATTERN = re.compile(r"auto|(cpu|cuda|mps|xpu|meta)(:\d+)?")


class TrainConfigError(ValueError):
    """An invalid training setting; the message names the field and the allowed values."""


def resolve_device(name: str) -> torch.device:
    """A torch device from a config string; "auto" is cuda when a GPU is visible, else cpu."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _fail(name: str, value: Any, allowed: str) -> None:
    raise TrainConfigError(f"TrainConfig.{name}={value!r}: {allowed}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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
                        None is left out of the identity: runs without it keep their hash.
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
        self._validate_counts()
        self._validate_optimizer()
        self._validate_schedule()
        self._validate_outputs()
        self.keep_checkpoints_at = tuple(sorted(set(self.keep_checkpoints_at)))

    # -- validation ---------------------------------------------------------------------
    def _validate_counts(self) -> None:
        for name, low in (("steps", 1), ("batch_size", 1), ("log_every", 1), ("threads", 1)):
            value = getattr(self, name)
            if not _is_int(value) or value < low:
                _fail(name, value, f"must be an integer >= {low}")
        for name in ("eval_every", "checkpoint_every", "seed"):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                _fail(name, value, "must be an integer >= 0 (0 for eval_every/checkpoint_every: only at the end)")
        if self.time_budget_s is not None and (not _is_real(self.time_budget_s) or self.time_budget_s <= 0):
            _fail("time_budget_s", self.time_budget_s, "must be a positive number of seconds, or None")
        if not isinstance(self.log_gains, bool):
            _fail("log_gains", self.log_gains, "must be true or false")
        if not isinstance(self.device, str) or not DEVICE_PATTERN.fullmatch(self.device):
            _fail("device", self.device, "must be 'auto' or a torch device string such as 'cpu' or 'cuda:0'")
        if self.precision not in PRECISIONS:
            _fail("precision", self.precision, f"choose one of: {', '.join(PRECISIONS)}")
        if self.init_from is not None and (not isinstance(self.init_from, str) or not self.init_from):
            _fail("init_from", self.init_from, "must be a non-empty label of the starting weights, or None")

    def _validate_optimizer(self) -> None:
        if not _is_real(self.lr) or self.lr <= 0:
            _fail("lr", self.lr, "must be a positive number")
        if not _is_real(self.weight_decay) or self.weight_decay < 0:
            _fail("weight_decay", self.weight_decay, "must be a number >= 0")
        betas_ok = isinstance(self.betas, tuple) and len(self.betas) == 2
        if not (betas_ok and all(_is_real(b) and 0 <= b < 1 for b in self.betas)):
            _fail("betas", self.betas, "must be two numbers in [0, 1)")
        if not _is_real(self.eps) or self.eps <= 0:
            _fail("eps", self.eps, "must be a positive number")
        if self.grad_clip is not None and (not _is_real(self.grad_clip) or self.grad_clip <= 0):
            _fail("grad_clip", self.grad_clip, "must be a positive number, or None for no clipping")
        for pattern, factor in self.lr_multipliers.items():
            try:
                re.compile(pattern)
            except (re.error, TypeError) as err:
                _fail("lr_multipliers", pattern, f"keys must be regular expressions ({err})")
            if not _is_real(factor) or factor < 0:
                _fail("lr_multipliers", {pattern: factor}, "values must be numbers >= 0")

    def _validate_schedule(self) -> None:
        if self.schedule not in SCHEDULES:
            _fail("schedule", self.schedule, f"choose one of: {', '.join(SCHEDULES)}")
        if self.warmup_steps is not None and self.warmup_fraction is not None:
            _fail("warmup_steps", self.warmup_steps, "give warmup_steps or warmup_fraction, not both")
        if self.warmup_steps is not None:
            if not _is_int(self.warmup_steps) or not 0 <= self.warmup_steps < self.steps:
                _fail("warmup_steps", self.warmup_steps, f"must be an integer in [0, steps={self.steps})")
            if self.time_budget_s is not None:
                _fail(
                    "warmup_steps",
                    self.warmup_steps,
                    "with time_budget_s the schedule follows the clock; give warmup_fraction",
                )
        fraction = self.warmup_fraction
        if fraction is not None and (not _is_real(fraction) or not 0 <= fraction < 1):
            _fail("warmup_fraction", self.warmup_fraction, "must be a number in [0, 1)")
        if self.schedule == "triangular" and (self.warmup_steps or self.warmup_fraction):
            _fail(
                "schedule",
                self.schedule,
                "'triangular' rises to its peak at peak_fraction; leave warmup_steps/warmup_fraction unset",
            )
        if self.schedule == "inverse_sqrt" and self.warmup() <= 0:
            _fail("schedule", self.schedule, "'inverse_sqrt' needs a positive warmup_steps or warmup_fraction")
        if not _is_real(self.peak_fraction) or not 0 < self.peak_fraction < 1:
            _fail("peak_fraction", self.peak_fraction, "must be a number in (0, 1)")
        for name in ("min_lr", "warmup_init_lr"):
            value = getattr(self, name)
            if not _is_real(value) or not 0 <= value <= self.lr:
                _fail(name, value, f"must be a number in [0, lr={self.lr}]")

    def _validate_outputs(self) -> None:
        for step in self.keep_checkpoints_at:
            if not _is_int(step) or not 1 <= step <= self.steps:
                allowed = f"must list integers in [1, steps={self.steps}]"
                _fail("keep_checkpoints_at", self.keep_checkpoints_at, allowed)

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
        if values["init_from"] is None:  # runs from a fresh initialisation write the run.json they always did
            del values["init_from"]
        return values

    def result_fields(self) -> dict[str, Any]:
        """The settings that determine what the run computes (all but EXECUTION_FIELDS).

        The default precision is left out, so that fp32 runs keep the hash they had before the
        field existed and their checkpoints still resume.
        """
        fields = {k: v for k, v in self.to_dict().items() if k not in EXECUTION_FIELDS}
        if fields["precision"] == "fp32":
            del fields["precision"]
        return fields  # init_from is in it only when set (to_dict leaves None out)

    @property
    def autocast_dtype(self) -> torch.dtype | None:
        """The autocast dtype of training passes, None for fp32."""
        import torch

        name = PRECISIONS[self.precision]
        return None if name is None else getattr(torch, name)

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
