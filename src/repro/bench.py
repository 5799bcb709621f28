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
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from repro.analysis.throughput import flops_per_token
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

    @property
    def tokens_per_step(self) -> int:
        return self.seq_len * self.batch_size


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
    cfg = TransformerConfig(
        vocab_size=shape.vocab_size,
        n_layers=shape.n_layers,
        d_model=shape.d_model,
        n_heads=shape.n_heads,
        d_ff=4 * shape.d_model,
        max_seq_len=shape.seq_len,
        block="pre_ln",
        norm="layernorm",
        activation="gelu",
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
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=0,
        eos_token_id=0,
        loss_type="ForCausalLM",
    )
    cfg._attn_implementation = "sdpa"  # PyTorch's fused attention, as ours uses
    return GPT2LMHeadModel(cfg)


def _our_loss(model, tokens):
    logits = model(tokens)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


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
        start = time.perf_counter()
        for _ in range(n):
            self.step()
        self.seconds.append((time.perf_counter() - start) / n)


def run_benchmark(
    shape: BenchShape = BenchShape(),
    threads: int = 2,
    steps: int = 5,
    rounds: int = 4,
    warmup: int = 3,
    include_hf: bool = True,
) -> dict:
    """Interleave `rounds` timings of `steps` steps per candidate; report medians."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    tokens = torch.randint(0, shape.vocab_size, (shape.batch_size, shape.seq_len))
    ours = our_model(shape)
    timers = [StepTimer("ours (pre_ln)", ours, _our_loss, tokens)]
    if include_hf:
        timers.append(StepTimer("hf gpt2", hf_gpt2(shape), _hf_loss, tokens))
    for timer in timers:
        for _ in range(warmup):
            timer.step()
    peaks = []
    for _ in range(rounds):
        peaks.append(matmul_peak_gflops())
        for timer in timers:
            timer.time_steps(steps)
    peak = max(peaks)
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
                "fraction_of_peak": tokens_per_s * flops / 1e9 / peak,
            }
        )
    return {
        "shape": asdict(shape),
        "threads": threads,
        "torch": torch.__version__,
        "matmul_peak_gflops": peak,
        "flops_per_token": flops,
        "models": rows,
    }


def format_report(result: dict) -> str:
    lines = [
        f"shape: {result['shape']}, threads={result['threads']}, torch {result['torch']}",
        f"fp32 matmul peak: {result['matmul_peak_gflops']:.1f} GFLOP/s; model FLOPs/token: {result['flops_per_token']:.3g}",
        f"{'model':<16}{'params':>12}{'tokens/s':>12}{'GFLOP/s':>10}{'of peak':>9}",
    ]
    for row in result["models"]:
        lines.append(
            f"{row['model']:<16}{row['parameters']:>12,}{row['tokens_per_s']:>12,.0f}{row['gflops']:>10.1f}"
            f"{row['fraction_of_peak']:>9.0%}"
        )
    if len(result["models"]) == 2:
        ours, hf = result["models"]
        lines.append(f"ours / hf gpt2 throughput: {ours['tokens_per_s'] / hf['tokens_per_s']:.2f}x")
    return "\n".join(lines)
