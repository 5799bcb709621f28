"""The specs of the param_allocation jobs, built from the config alone: one function per kind of job,
used by the Snakemake rules (which pass the JSON to the commands) and by the tests. Kept free of
heavy imports: the Snakefile imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repro.training.config import TrainConfig

PAPER = "param_allocation"
#: Positions under which a head's logits are not a bilinear form of its inputs, so it cannot be replaced exactly.
UNSUPPORTED_POSITIONS = ("rope", "alibi")
#: `replacement.head` value that picks each layer's rank-sweep head by its ablation gap on selection chunks.
LARGEST_GAP = "largest_gap"
# Steps whose settings are their own part of the section, as they are.
PLAIN_STEPS = ("jacobian", "low_rank", "sweep", "saturation", "decoders")


def step_spec(config: dict, step: str) -> dict[str, Any]:
    """The settings of one step: the section's part of that name (see PLAIN_STEPS)."""
    if step not in PLAIN_STEPS:
        raise KeyError(f"{step!r} is not a plain step; plain steps: {', '.join(PLAIN_STEPS)}")
    return config[PAPER][step]


def bound_spec(config: dict) -> dict[str, Any]:
    """The bound needs the sweep's budget, head counts and tasks beside its own constants."""
    section = config[PAPER]
    sweep = section["sweep"]
    return dict(section["bound"], budget=sweep["budget"], heads=sweep["heads"], tasks=sweep["tasks"])


def teacher_spec(config: dict, seed: int) -> dict[str, Any]:
    """The `python -m repro train lm` spec of one teacher decoder (vocabulary: the tokenizer's)."""
    lm = config[PAPER]["lm"]
    model = dict(lm["model"], vocab_size=config["tokenizer"]["vocab_size"])
    train = dict(lm["train"], seed=int(seed))
    return {"paper": PAPER, "variant": "teacher", "seed": int(seed), "model": model, "train": train}


def teacher_analysis_spec(config: dict) -> dict[str, Any]:
    """Single-head replacement and logit norms of the trained teachers (Figs 4, 6, 9, 10)."""
    section = config[PAPER]
    return {
        "eval_chunks": section["lm"]["eval_chunks"],
        "heldout_chunks": section["lm"]["heldout_chunks"],
        "replacement": section["replacement"],
        "logit_norms": section["logit_norms"],
    }


def trained_models(config: dict) -> list[dict[str, Any]]:
    """Every model shape this paper trains, for the benchmark (repro.bench): the teacher decoders
    and the Fig 5 grid (head dim x context at a fixed number of tokens per step)."""
    section, vocab = config[PAPER], config["tokenizer"]["vocab_size"]
    teacher = teacher_spec(config, 0)
    out = [
        {
            "what": "teacher decoder",
            "model": teacher["model"],
            "batch_size": teacher["train"]["batch_size"],
            "runs": len(section["lm"]["seeds"]),
        }
    ]
    grid = section["decoders"]
    for length in grid["lengths"]:
        for head_dim in grid["head_dims"]:
            out.append(
                {
                    "what": f"decoder T={length} head_dim={head_dim}",
                    "model": dict(grid["model"], max_seq_len=int(length), head_dim=int(head_dim), vocab_size=vocab),
                    "batch_size": grid["tokens_per_step"] // int(length),
                    "runs": len(grid["seeds"]),
                }
            )
    return out


def grid_spec(
    model: dict,
    train_config: dict,
    length: int,
    head_dim: int,
    tokens_per_step: int,
    vocab_size: int,
    seed: int,
    threads: int = 1,
) -> tuple[dict, TrainConfig]:
    """The model fields and TrainConfig of one Fig 5 decoder (sequence length, head dim) of the grid (raises
    ValueError on a bad combination): batch = tokens_per_step / length, so every run sees the same tokens."""
    from repro.training.config import TrainConfig

    if tokens_per_step % length:
        raise ValueError(f"tokens_per_step={tokens_per_step} is not a multiple of the sequence length {length}")
    fields = dict(model, max_seq_len=int(length), head_dim=int(head_dim), vocab_size=int(vocab_size))
    config = TrainConfig(
        **dict(train_config, batch_size=tokens_per_step // length, seed=int(seed), threads=int(threads))
    )
    return fields, config
