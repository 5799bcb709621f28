"""Training and inference throughput of several model configurations, measured interleaved.

All models are built in one process and timed in rounds; each round times every model once, in
an order rotated by one from the previous round, so a slow phase of the machine (another job,
a frequency change) is spread over all models instead of deciding which one looks faster.
The reported speed is the median tokens/s over rounds, and the speed relative to a reference is
the mean over rounds of the ratio within a round (He & Hofmann 2024 report throughput at training
and at inference; the speed column of their Table 1 is training steps in a fixed time).

- training step: forward, next-token cross-entropy, backward, gradient clipping at 1.0 and the
  AdamW update of `repro.training.optim` (weight-decay groups as in training);
- inference: forward pass in eval mode under `torch.no_grad()`, same batch.

Both run on `ThroughputSettings.device` ("auto": cuda when a GPU is visible) in its `precision`
("bf16": autocast, weights and optimizer state in fp32, as the trainer's setting of that name); on a
GPU each timing waits for the device's work to finish.

Model FLOPs per token follow the PaLM convention (Chowdhery et al. 2022, App. B): 6·N + 12·L·T·d
for a training step and a third of that for a forward pass, with N the weights used in matrix
products (linear layers, value/projection matrices that exist, the unembedding).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from repro.models import Transformer, TransformerConfig, count_parameters
from repro.models.attention import MatrixMap
from repro.training.config import PRECISIONS, precision_dtype, resolve_device
from repro.training.optim import build_optimizer

COLUMNS = ["variant", "mode", "round", "position", "seconds_per_step", "tokens_per_s"]


@dataclass(frozen=True)
class ThroughputSettings:
    batch_size: int = 8
    seq_len: int = 64
    threads: int = 1
    warmup_steps: int = 5
    timed_steps: int = 5
    rounds: int = 6
    seed: int = 0
    device: str = "cpu"
    precision: str = "fp32"

    def __post_init__(self) -> None:
        for name in ("batch_size", "seq_len", "threads", "timed_steps", "rounds"):
            if getattr(self, name) < 1:
                raise ValueError(f"ThroughputSettings.{name}={getattr(self, name)!r} must be >= 1")
        if self.warmup_steps < 0:
            raise ValueError(f"ThroughputSettings.warmup_steps={self.warmup_steps!r} must be >= 0")
        if self.precision not in PRECISIONS:
            raise ValueError(f"ThroughputSettings.precision={self.precision!r} must be one of {sorted(PRECISIONS)}")

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.seq_len


def matmul_weights(model: Transformer) -> int:
    """Weights that take part in a matrix product per token: linear layers, every value and
    projection matrix that exists (identity maps are skipped), and the (tied) unembedding."""
    total = 0
    for module in model.modules():
        if isinstance(module, nn.Linear):
            total += module.weight.numel()
        elif isinstance(module, MatrixMap) and module.kind != "identity":
            total += module.effective_weight().numel()
    if model.cfg.output == "lm" and model.cfg.tie_embeddings:
        total += model.tok_emb.weight.numel()
    return total


def flops_per_token(model: Transformer, seq_len: int) -> float:
    """Training FLOPs per token, 6·N + 12·Σ_layers(T·H·d_h) (PaLM convention)."""
    cfg = model.cfg
    attention = sum(12 * seq_len * h * dh for h, dh in zip(cfg.n_heads, cfg.head_dim))
    return 6.0 * matmul_weights(model) + float(attention)


def next_token_loss(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy of a causal LM's logits on `tokens` [B, T]."""
    logits = model(tokens)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


def synchronizer(device: torch.device) -> Callable[[], None]:
    """What waits for a device's queued work: CUDA runs kernels asynchronously, the CPU does not."""
    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def seconds_per_call(step: Callable[[], object], calls: int, sync: Callable[[], None] = lambda: None) -> float:
    """Mean wall-clock seconds of `calls` back-to-back calls of `step`; `sync` waits for the device's
    work before the clock starts and before it stops."""
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        step()
    sync()
    return (time.perf_counter() - start) / calls


class _Timed:
    """One model with a fixed batch, its optimiser, and the timings of each mode."""

    def __init__(self, name: str, cfg: TransformerConfig, tokens: torch.Tensor, dtype: torch.dtype | None = None):
        self.name = name
        self.device, self.dtype = tokens.device, dtype
        self.model = Transformer(cfg).to(self.device)
        self.tokens = tokens  # [B, T], on the device the model runs on
        self.optimizer = build_optimizer(self.model, lr=1e-4, weight_decay=0.1)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.sync = synchronizer(self.device)
        self.seconds: dict[str, list[float]] = {"train": [], "inference": []}

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype is not None)

    def train_step(self) -> None:
        self.model.train()
        with self._autocast():
            loss = next_token_loss(self.model, self.tokens)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    @torch.no_grad()
    def inference_step(self) -> None:
        self.model.eval()
        with self._autocast():
            self.model(self.tokens)

    def time(self, mode: str, steps: int) -> float:
        seconds = seconds_per_call(self.train_step if mode == "train" else self.inference_step, steps, self.sync)
        self.seconds[mode].append(seconds)
        return seconds


def measure_throughput(configs: dict[str, TransformerConfig], settings: ThroughputSettings) -> pd.DataFrame:
    """Tidy timings: one row per (variant, mode, round) with seconds per step and tokens/s.

    Every model is built from its config after seeding with `settings.seed`, and all see the same
    random batch of `batch_size` × `seq_len` tokens (the vocabulary of the first config).
    """
    if not configs:
        raise ValueError("measure_throughput needs at least one configuration")
    torch.set_num_threads(settings.threads)
    device = resolve_device(settings.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"ThroughputSettings.device={settings.device!r}: torch {torch.__version__} sees no CUDA device"
        )
    vocab = min(cfg.vocab_size for cfg in configs.values())
    tokens = torch.randint(
        0, vocab, (settings.batch_size, settings.seq_len), generator=torch.Generator().manual_seed(settings.seed)
    ).to(device)
    timed = []
    for name, cfg in configs.items():
        if cfg.max_seq_len < settings.seq_len:
            raise ValueError(f"{name}: max_seq_len={cfg.max_seq_len} is shorter than seq_len={settings.seq_len}")
        torch.manual_seed(settings.seed)  # initialised on the CPU, as the trainer's models, then moved
        timed.append(_Timed(name, cfg, tokens, precision_dtype(settings.precision)))
    for entry in timed:
        for _ in range(settings.warmup_steps):
            entry.train_step()
            entry.inference_step()
    rows = []
    for round_ in range(settings.rounds):
        shift = round_ % len(timed)
        order = timed[shift:] + timed[:shift]
        for mode in ("train", "inference"):
            for position, entry in enumerate(order):
                seconds = entry.time(mode, settings.timed_steps)
                rows.append(
                    dict(
                        variant=entry.name,
                        mode=mode,
                        round=round_,
                        position=position,
                        seconds_per_step=seconds,
                        tokens_per_s=settings.tokens_per_step / seconds,
                    )
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def time_interleaved(steps: dict[str, Callable[[], object]], rounds: int, warmup: int = 1) -> pd.DataFrame:
    """Wall-clock seconds of zero-argument callables timed in interleaved rounds.

    Each callable first runs ``warmup`` times untimed; then every round times each callable once,
    in an order rotated by one from the previous round (as `measure_throughput` does), so a slow
    phase of the machine is spread over all of them. Returns one row per (name, round) with the
    position in that round's order and the seconds taken.
    """
    if not steps:
        raise ValueError("time_interleaved needs at least one callable")
    if rounds < 1 or warmup < 0:
        raise ValueError(f"rounds={rounds} must be >= 1 and warmup={warmup} >= 0")
    names = list(steps)
    for name in names:
        for _ in range(warmup):
            steps[name]()
    rows = []
    for round_ in range(rounds):
        shift = round_ % len(names)
        for position, name in enumerate(names[shift:] + names[:shift]):
            start = time.perf_counter()
            steps[name]()
            rows.append(dict(variant=name, round=round_, position=position, seconds=time.perf_counter() - start))
    return pd.DataFrame(rows, columns=["variant", "round", "position", "seconds"])


def model_facts(configs: dict[str, TransformerConfig], seq_len: int) -> pd.DataFrame:
    """Per variant: trainable parameters, matmul weights and model FLOPs per token (train, inference)."""
    rows = []
    for name, cfg in configs.items():
        model = Transformer(cfg)
        train_flops = flops_per_token(model, seq_len)
        rows.append(
            dict(
                variant=name,
                block=cfg.block,
                norm=cfg.norm,
                parameters=count_parameters(model),
                matmul_weights=matmul_weights(model),
                train_flops_per_token=train_flops,
                inference_flops_per_token=train_flops / 3.0,
            )
        )
    return pd.DataFrame(rows)


def summarize(timings: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per (variant, mode): the median tokens/s over rounds, and the speed relative to `reference` as the
    speed claims judge it, the mean over rounds of the ratio within a round (paired: a round times every
    model back to back, so the machine's state of that moment cancels)."""
    if reference not in set(timings["variant"]):
        raise ValueError(f"reference variant {reference!r} was not timed; timed: {sorted(set(timings['variant']))}")
    medians = timings.groupby(["variant", "mode"], sort=False)["tokens_per_s"].median().rename("tokens_per_s")
    ref = timings[timings["variant"] == reference].set_index(["mode", "round"])["tokens_per_s"]
    paired = timings["tokens_per_s"].to_numpy() / ref.loc[list(zip(timings["mode"], timings["round"]))].to_numpy()
    ratios = timings.assign(ratio=paired).groupby(["variant", "mode"], sort=False)["ratio"].mean()
    return medians.reset_index().assign(speed_vs_reference=ratios.to_numpy())


def settings_dict(settings: ThroughputSettings) -> dict:
    return asdict(settings)


__all__ = [
    "COLUMNS",
    "ThroughputSettings",
    "flops_per_token",
    "matmul_weights",
    "measure_throughput",
    "model_facts",
    "settings_dict",
    "summarize",
    "time_interleaved",
]
