"""Throughput benchmark: our training step against the machine's matmul peak and HF GPT-2.

Measured in one process, interleaving the candidates so that machine noise (another
job, frequency changes) does not decide which one looks faster:

- the fp32 matmul peak, GFLOP/s of `torch.mm` on square matrices (best of repeats);
- tokens/s of one training step (forward, backward, AdamW update) of our Pre-LN decoder
  and of Hugging Face `GPT2LMHeadModel` with the same width, depth, heads, vocabulary,
  sequence length and batch (GELU MLP of width 4d, tied embeddings, no dropout, SDPA);
- achieved GFLOP/s = tokens/s × FLOPs per token, counted by repro.analysis.throughput.flops_per_token
  (the PaLM convention, Chowdhery et al. 2022, App. B: 6·N + 12·L·T·d per token, N the parameters
  used in matmuls: the blocks and the unembedding).

Besides the d=256 reference shape, :func:`config_shapes` lists every model shape a scale's config
trains (width, depth, heads, head dim, MLP width, context, batch, vocabulary), read through each
paper's ``specs.trained_models``; each is benchmarked as a Pre-LN decoder of that shape, the same
step for all (a classifier's or an encoder-decoder's step does about the same matmuls per token).
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

import torch

from repro.analysis.throughput import flops_per_token, next_token_loss, seconds_per_call
from repro.models import Transformer, TransformerConfig
from repro.training.optim import build_optimizer


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


def matmul_peak_gflops(size: int = 2048, repeats: int = 5) -> float:
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(2):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2.0 * size**3 / best / 1e9


def our_model(shape: BenchShape) -> torch.nn.Module:
    """A GPT-2-like model of `shape`: Pre-LN, LayerNorm, GELU."""
    sizes = {name: getattr(shape, name) for name in ("vocab_size", "n_layers", "d_model", "n_heads", "head_dim")}
    cfg = TransformerConfig(
        **sizes, d_ff=shape.mlp_width, max_seq_len=shape.seq_len, block="pre_ln", norm="layernorm", activation="gelu"
    )
    return Transformer(cfg)


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
    """Times full training steps of one model on a fixed batch."""

    def __init__(self, name: str, model: torch.nn.Module, loss_fn, tokens: torch.Tensor):
        self.name, self.model, self.loss_fn, self.tokens = name, model.train(), loss_fn, tokens
        self.optimizer = build_optimizer(model, lr=1e-4, weight_decay=0.1)
        self.seconds: list[float] = []

    def step(self) -> None:
        loss = self.loss_fn(self.model, self.tokens)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def time_steps(self, n: int) -> None:
        self.seconds.append(seconds_per_call(self.step, n))


def run_shapes(
    shapes: Iterable[BenchShape | TrainedShape],
    threads: int = 2,
    steps: int = 5,
    rounds: int = 4,
    warmup: int = 3,
    include_hf: bool = True,
) -> dict:
    """Benchmark each shape (ours and, where its head dim allows, HF GPT-2, interleaved in rounds),
    with the matmul peak measured between shapes; every share of peak is against the best peak seen."""
    torch.set_num_threads(threads)
    results, peaks = [], []
    for item in shapes:
        trained = item if isinstance(item, TrainedShape) else TrainedShape(item)
        shape = trained.shape
        torch.manual_seed(0)
        tokens = torch.randint(0, shape.vocab_size, (shape.batch_size, shape.seq_len))
        ours = our_model(shape)
        timers = [StepTimer("ours (pre_ln)", ours, next_token_loss, tokens)]
        if include_hf and shape.gpt2_compatible:
            timers.append(StepTimer("hf gpt2", hf_gpt2(shape), _hf_loss, tokens))
        for timer in timers:
            for _ in range(warmup):
                timer.step()
        for _ in range(rounds):
            peaks.append(matmul_peak_gflops())
            for timer in timers:
                timer.time_steps(steps)
        flops = flops_per_token(ours, shape.seq_len)  # the same count for GPT-2 of this shape
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
                }
            )
        results.append(
            {
                "shape": asdict(shape),
                "runs": trained.runs,
                "users": trained.users,
                "flops_per_token": flops,
                "models": rows,
            }
        )
    peak = max(peaks)
    for result in results:
        result["matmul_peak_gflops"] = peak
        for row in result["models"]:
            row["fraction_of_peak"] = row["gflops"] / peak
    return {"threads": threads, "torch": torch.__version__, "matmul_peak_gflops": peak, "shapes": results}


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
    """run_shapes' result as a table: one line per shape, ours beside HF GPT-2 at that shape."""
    lines = [
        f"threads={result['threads']}, torch {result['torch']}, "
        f"fp32 matmul peak {result['matmul_peak_gflops']:.1f} GFLOP/s",
        f"{'shape':<52}{'runs':>5}{'tokens/s':>11}{'GFLOP/s':>9}{'of peak':>8}{'hf tokens/s':>13}{'ours/hf':>8}",
    ]
    for item in result["shapes"]:
        shape = BenchShape(**item["shape"])
        ours, hf = item["models"][0], (item["models"][1] if len(item["models"]) > 1 else None)
        runs = str(item["runs"]) if item["runs"] else reference
        hf_cells = (
            f"{hf['tokens_per_s']:>13,.0f}{ours['tokens_per_s'] / hf['tokens_per_s']:>7.2f}x"
            if hf
            else f"{'–':>13}{'–':>8}"
        )
        lines.append(
            f"{shape.describe():<52}{runs:>5}{ours['tokens_per_s']:>11,.0f}{ours['gflops']:>9.1f}"
            f"{ours['fraction_of_peak']:>8.0%}{hf_cells}"
        )
    users = [
        f"  {BenchShape(**i['shape']).describe()}: {_summarise(i['users'])}" for i in result["shapes"] if i["users"]
    ]
    if users:
        lines += ["", "trained by:", *users]
    return "\n".join(lines)
