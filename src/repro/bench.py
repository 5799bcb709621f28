"""Throughput benchmark: our training step against the machine's matmul peak and HF GPT-2.

Measured in one process, interleaving the candidates so that machine noise (another
job, frequency changes) does not decide which one looks faster:

- the matmul peak of each precision timed, GFLOP/s of `torch.mm` on square matrices (best of
  repeats; fp32 without TF32, bf16 in bfloat16);
- tokens/s of one training step (forward, backward, AdamW update) of our Pre-LN decoder
  and of Hugging Face `GPT2LMHeadModel` with the same width, depth, heads, vocabulary,
  sequence length and batch (GELU MLP of width 4d, tied embeddings, no dropout, SDPA);
- achieved GFLOP/s = tokens/s × FLOPs per token, counted by repro.analysis.throughput.flops_per_token
  (the PaLM convention, Chowdhery et al. 2022, App. B: 6·N + 12·L·T·d per token, N the parameters
  used in matmuls: the blocks and the unembedding).

On a GPU (``device="cuda"``) every timing waits for the device's work to finish, each precision
is timed at every shape (``precisions``: "fp32", and "bf16" autocast with fp32 weights and optimizer
state, as the trainer's ``precision`` setting does), and the peak GPU memory of each timing is
recorded. A shape whose training state (fp32 weights, gradients and two AdamW moments: 16 bytes a
parameter) does not fit the device's memory is skipped, and one that runs out of memory is
reported as such, so that one call can measure every paper-scale shape a device can hold.

Besides the d=256 reference shape, :func:`config_shapes` lists every model shape a scale's config
trains (width, depth, heads, head dim, MLP width, context, batch, vocabulary), read through each
paper's ``specs.trained_models``; each is benchmarked as a Pre-LN decoder of that shape, the same
step for all (a classifier's or an encoder-decoder's step does about the same matmuls per token).
"""

from __future__ import annotations

import gc
import importlib
import os
import platform
import statistics
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

import torch

from repro.analysis.throughput import flops_per_token, next_token_loss, seconds_per_call, synchronizer
from repro.models import Transformer, TransformerConfig
from repro.training.config import precision_dtype, resolve_device
from repro.training.optim import build_optimizer

#: Bytes of training state per parameter: fp32 weight, gradient and AdamW's two moments.
TRAINING_STATE_BYTES = 16


@dataclass(frozen=True)
class BenchShape:
    d_model: int = 256
    n_layers: int = 4
    n_heads: int = 4
    seq_len: int = 128
    batch_size: int = 32
    vocab_size: int = 4096
    d_ff: int | None = None  # 4 * d_model when None
    head_dim: int | None = None  # d_model / n_heads when None

    @property
    def tokens_per_step(self) -> int:
        return self.seq_len * self.batch_size

    @property
    def mlp_width(self) -> int:
        return self.d_ff or 4 * self.d_model

    @property
    def gpt2_compatible(self) -> bool:
        """Hugging Face GPT-2 ties the head dim to d_model / n_heads."""
        return self.head_dim is None or self.head_dim * self.n_heads == self.d_model

    def describe(self) -> str:
        head = f" hd={self.head_dim}" if self.head_dim else ""
        return (
            f"d={self.d_model} L={self.n_layers} h={self.n_heads}{head} ff={self.mlp_width} "
            f"T={self.seq_len} B={self.batch_size} V={self.vocab_size}"
        )


@dataclass
class TrainedShape:
    """A model shape a config trains, with what trains it and how many runs."""

    shape: BenchShape
    runs: int = 0
    users: list[str] = field(default_factory=list)


def shape_of(model: dict, batch_size: int) -> BenchShape:
    """The benchmark shape of a run's model fields (TransformerConfig names) and batch size."""
    head_dim = model.get("head_dim")
    return BenchShape(
        d_model=int(model["d_model"]),
        n_layers=int(model["n_layers"]),
        n_heads=int(model["n_heads"]),
        seq_len=int(model["max_seq_len"]),
        batch_size=int(batch_size),
        vocab_size=int(model["vocab_size"]),
        d_ff=int(model.get("d_ff") or 4 * int(model["d_model"])),
        head_dim=None
        if head_dim is None or int(head_dim) * int(model["n_heads"]) == int(model["d_model"])
        else int(head_dim),
    )


def config_shapes(config: dict, papers: Iterable[str] | None = None) -> list[TrainedShape]:
    """The distinct model shapes `config` trains, most runs first: each paper of the config lists
    its models in ``repro.papers.<paper>.specs.trained_models(config)``."""
    from repro.papers import PAPERS, part

    shapes: dict[BenchShape, TrainedShape] = {}
    for paper in papers or [p for p in PAPERS if p in config]:
        for entry in importlib.import_module(part(paper, "specs")).trained_models(config):
            shape = shape_of(entry["model"], entry["batch_size"])
            trained = shapes.setdefault(shape, TrainedShape(shape))
            trained.runs += int(entry["runs"])
            trained.users.append(f"{paper}: {entry['what']}")
    return sorted(shapes.values(), key=lambda t: (-t.runs, t.shape.describe()))


def matmul_peak_gflops(
    size: int | None = None, repeats: int = 5, device: torch.device | str = "cpu", precision: str = "fp32"
) -> float:
    """GFLOP/s of the best of `repeats` square products in the precision's dtype (2048 on a CPU,
    8192 on a GPU, where a small product would time the kernel launch)."""
    device = torch.device(device)
    size = size or (8192 if device.type == "cuda" else 2048)
    dtype = precision_dtype(precision) or torch.float32
    sync = synchronizer(device)
    a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))
    for _ in range(2):
        a @ b
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        sync()
        best = min(best, time.perf_counter() - start)
    return 2.0 * size**3 / best / 1e9


def our_model(shape: BenchShape) -> torch.nn.Module:
    """A GPT-2-like model of `shape`: Pre-LN, LayerNorm, GELU."""
    sizes = {name: getattr(shape, name) for name in ("vocab_size", "n_layers", "d_model", "n_heads", "head_dim")}
    cfg = TransformerConfig(
        **sizes, d_ff=shape.mlp_width, max_seq_len=shape.seq_len, block="pre_ln", norm="layernorm", activation="gelu"
    )
    return Transformer(cfg)


def parameter_count(shape: BenchShape) -> int:
    """Parameters of `our_model(shape)`, counted on the meta device (nothing is allocated)."""
    with torch.device("meta"):
        return sum(p.numel() for p in our_model(shape).parameters())


def hf_gpt2(shape: BenchShape) -> torch.nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=shape.vocab_size,
        n_positions=shape.seq_len,
        n_embd=shape.d_model,
        n_layer=shape.n_layers,
        n_head=shape.n_heads,
        n_inner=shape.mlp_width,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=0,
        eos_token_id=0,
        loss_type="ForCausalLM",
    )
    cfg._attn_implementation = "sdpa"  # PyTorch's fused attention, as ours uses
    return GPT2LMHeadModel(cfg)


def _hf_loss(model, tokens):
    return model(input_ids=tokens, labels=tokens).loss


class StepTimer:
    """Times full training steps of one model on a fixed batch, on the batch's device, in one precision."""

    def __init__(self, name: str, model: torch.nn.Module, loss_fn, tokens: torch.Tensor, precision: str = "fp32"):
        self.device = tokens.device
        self.name, self.model, self.loss_fn, self.tokens = name, model.to(self.device).train(), loss_fn, tokens
        self.dtype = precision_dtype(precision)
        self.optimizer = build_optimizer(self.model, lr=1e-4, weight_decay=0.1)
        self.sync = synchronizer(self.device)
        self.seconds: list[float] = []

    def step(self) -> None:
        with torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype is not None):
            loss = self.loss_fn(self.model, self.tokens)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def time_steps(self, n: int) -> None:
        self.seconds.append(seconds_per_call(self.step, n, self.sync))


def _free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def device_memory(device: torch.device) -> int:
    """Bytes of memory of a GPU, or of the host for the CPU."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _too_large(device: torch.device, parameters: int) -> str | None:
    """Why a model of `parameters` cannot train on `device`, before trying, or None: its training
    state alone (TRAINING_STATE_BYTES a parameter) exceeds the device's memory."""
    need, have = parameters * TRAINING_STATE_BYTES, device_memory(device)
    if need <= have:
        return None
    return (
        f"skipped: {parameters / 1e9:.2f}B parameters need {need / 2**30:.0f} GiB of training state, "
        f"{device.type} memory is {have / 2**30:.0f} GiB"
    )


def _time_precision(
    shape: BenchShape,
    precision: str,
    device: torch.device,
    steps: int,
    rounds: int,
    warmup: int,
    include_hf: bool,
    matmul_size: int | None,
) -> tuple[list[dict], list[float], float]:
    """Rows of `shape` in one precision (ours, and HF GPT-2 where comparable), the matmul peaks
    measured between its rounds, and the model FLOPs per token."""
    torch.manual_seed(0)
    tokens = torch.randint(0, shape.vocab_size, (shape.batch_size, shape.seq_len)).to(device)
    builders = [("ours (pre_ln)", our_model, next_token_loss)]
    if include_hf and shape.gpt2_compatible:
        builders.append(("hf gpt2", hf_gpt2, _hf_loss))
    timers, memory = [], {}
    for name, build, loss_fn in builders:
        # each model's own footprint: what its build, move and first steps add to what is held
        held = torch.cuda.memory_allocated(device) if device.type == "cuda" else 0
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        with device:  # built where it trains: a paper-scale model initialises far faster on a GPU
            model = build(shape)
        timer = StepTimer(name, model, loss_fn, tokens, precision)
        for _ in range(warmup):
            timer.step()
        timer.sync()
        if device.type == "cuda":
            memory[name] = (torch.cuda.max_memory_allocated(device) - held) / 2**30
        timers.append(timer)
    peaks = []
    for _ in range(rounds):
        peaks.append(matmul_peak_gflops(matmul_size, device=device, precision=precision))
        for timer in timers:
            timer.time_steps(steps)
    flops = flops_per_token(timers[0].model, shape.seq_len)  # the same count for GPT-2 of this shape
    rows = []
    for timer in timers:
        seconds = statistics.median(timer.seconds)
        tokens_per_s = shape.tokens_per_step / seconds
        rows.append(
            {
                "model": timer.name,
                "parameters": sum(p.numel() for p in timer.model.parameters()),
                "step_seconds": seconds,
                "tokens_per_s": tokens_per_s,
                "gflops": tokens_per_s * flops / 1e9,
                "peak_memory_gib": memory.get(timer.name),
            }
        )
    return rows, peaks, flops


def run_shapes(
    shapes: Iterable[BenchShape | TrainedShape],
    threads: int = 2,
    steps: int = 5,
    rounds: int = 4,
    warmup: int = 3,
    include_hf: bool = True,
    device: torch.device | str = "cpu",
    precisions: Iterable[str] = ("fp32",),
    matmul_size: int | None = None,
) -> dict:
    """Benchmark each shape in each precision (ours and, where its head dim allows, HF GPT-2,
    interleaved in rounds), with the precision's matmul peak measured between rounds; every share
    of peak is against the best peak of its precision. `device` "auto" is cuda when a GPU is visible;
    `matmul_size` replaces the peak's default matrix size (matmul_peak_gflops)."""
    torch.set_num_threads(threads)
    device = resolve_device(str(device))
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device} asked for, but torch {torch.__version__} sees no CUDA device")
    precisions = list(dict.fromkeys(precisions))
    for precision in precisions:
        precision_dtype(precision)  # an unknown precision fails before any timing
    results, peaks = [], {precision: [] for precision in precisions}
    for item in shapes:
        trained = item if isinstance(item, TrainedShape) else TrainedShape(item)
        shape = trained.shape
        parameters = parameter_count(shape)
        for precision in precisions:
            entry = {"shape": asdict(shape), "precision": precision, "runs": trained.runs, "users": trained.users}
            entry["flops_per_token"], entry["models"] = None, []
            entry["skipped"] = _too_large(device, parameters)
            if entry["skipped"] is None:
                try:
                    entry["models"], seen, entry["flops_per_token"] = _time_precision(
                        shape, precision, device, steps, rounds, warmup, include_hf, matmul_size
                    )
                    peaks[precision] += seen
                except torch.OutOfMemoryError as err:
                    entry["skipped"] = "out of memory: " + str(err).split("\n")[0][:200]
            _free(device)
            results.append(entry)
    best = {precision: max(seen) if seen else None for precision, seen in peaks.items()}
    for result in results:
        peak = best[result["precision"]]
        result["matmul_peak_gflops"] = peak
        for row in result["models"]:
            row["fraction_of_peak"] = row["gflops"] / peak
    return {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu",
        "threads": threads,
        "torch": torch.__version__,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "matmul_peak_gflops": best,
        "shapes": results,
    }


def _summarise(users: list[str], shown: int = 3) -> str:
    """'paper: what' entries as one part per paper: the first few and how many in all."""
    by_paper: dict[str, list[str]] = {}
    for user in users:
        paper, _, what = user.partition(": ")
        by_paper.setdefault(paper, []).append(what)
    parts = []
    for paper, whats in by_paper.items():
        more = f", ... ({len(whats)} in all)" if len(whats) > shown else ""
        parts.append(f"{paper} {', '.join(whats[:shown])}{more}")
    return "; ".join(parts)


def format_shapes(result: dict, reference: str = "reference") -> str:
    """run_shapes' result as a table: one line per shape and precision, ours beside HF GPT-2 at that
    shape, with the peak GPU memory of our step where it was measured."""
    peaks = ", ".join(
        f"{precision} {peak:,.1f}" if peak else f"{precision} –"
        for precision, peak in result["matmul_peak_gflops"].items()
    )
    lines = [
        f"{result['device']} ({result['device_name']}), threads={result['threads']}, torch {result['torch']}, "
        f"matmul peak GFLOP/s: {peaks}",
        f"{'shape':<52}{'runs':>5}{'prec':>5}{'tokens/s':>12}{'GFLOP/s':>10}{'of peak':>8}{'GiB':>7}"
        f"{'hf tokens/s':>13}{'ours/hf':>8}",
    ]
    for item in result["shapes"]:
        shape = BenchShape(**item["shape"])
        runs = str(item["runs"]) if item["runs"] else reference
        head = f"{shape.describe():<52}{runs:>5}{item['precision']:>5}"
        if item["skipped"]:
            lines.append(f"{head}  {item['skipped']}")
            continue
        ours, hf = item["models"][0], (item["models"][1] if len(item["models"]) > 1 else None)
        memory = f"{ours['peak_memory_gib']:>7.1f}" if ours["peak_memory_gib"] is not None else f"{'–':>7}"
        hf_cells = (
            f"{hf['tokens_per_s']:>13,.0f}{ours['tokens_per_s'] / hf['tokens_per_s']:>7.2f}x"
            if hf
            else f"{'–':>13}{'–':>8}"
        )
        lines.append(
            f"{head}{ours['tokens_per_s']:>12,.0f}{ours['gflops']:>10.1f}{ours['fraction_of_peak']:>8.0%}{memory}{hf_cells}"
        )
    seen, users = set(), []
    for item in result["shapes"]:
        described = BenchShape(**item["shape"]).describe()
        if item["users"] and described not in seen:
            seen.add(described)
            users.append(f"  {described}: {_summarise(item['users'])}")
    if users:
        lines += ["", "trained by:", *users]
    return "\n".join(lines)
