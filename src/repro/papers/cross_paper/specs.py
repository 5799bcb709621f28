"""Which runs of the other papers each cross-paper study reads, from the config. Kept free of heavy
imports: the Snakefile imports it."""

from __future__ import annotations

from repro.pipeline.configcheck import figure_seeds

#: The paper whose decoders studies 1-2 read, and the blocks their claims compare (record 0051).
BLOCKS_PAPER = "simplified_blocks"
CLAIMED_BLOCKS = ("pre_ln", "parallel", "sas", "sas_p")
#: Per-decoder files of block-eval, and the tables collect-blocks stacks them into (the rules read both).
BLOCK_FILES = {
    "heads.csv": "block_heads.csv",
    "prune.csv": "block_prune.csv",
    "members.csv": "block_members.csv",
    "decomposition.csv": "block_decomposition.csv",
}
#: Shares of a decoder's heads masked, lowest importance first (record 0051: 25 %, 50 %, 75 %).
PRUNE_PERCENTS = (25, 50, 75)


def block_seeds(config: dict, paper: str = "cross_paper") -> list[int]:
    """The seeds of the simplified_blocks figure whose decoders studies 1-2 read (every seed it trains)."""
    return figure_seeds(config[BLOCKS_PAPER], config[paper]["blocks"]["figure"])


def block_runs(config: dict, paper: str = "cross_paper") -> list[tuple[str, int]]:
    """(variant, seed) of every decoder studies 1-2 read."""
    return [(variant, seed) for variant in config[paper]["blocks"]["variants"] for seed in block_seeds(config, paper)]


#: The paper whose classifiers study 4 reads, and the task (record 0051: the NLI classifiers, every seed;
#: the workflow asks sixteen_heads for that task's seeds, as papers import no other paper).
HEADS_PAPER = "sixteen_heads"
SATURATION_TASK = "nli"


def saturation_task_file(config: dict, results: str) -> str:
    """The task file sixteen_heads trains its NLI classifiers on (its hub conversion at paper scale)."""
    folder = "hub_tasks" if config[HEADS_PAPER]["data_source"] == "hub" else "tasks"
    return f"{results}/{HEADS_PAPER}/data/{folder}/{SATURATION_TASK}.npz"


def trained_models(config: dict, paper: str = "cross_paper") -> list[dict]:
    """Nothing: the studies only evaluate the other papers' models (the benchmark asks every paper)."""
    return []


__all__ = [
    "BLOCKS_PAPER",
    "BLOCK_FILES",
    "CLAIMED_BLOCKS",
    "HEADS_PAPER",
    "PRUNE_PERCENTS",
    "SATURATION_TASK",
    "block_runs",
    "block_seeds",
    "saturation_task_file",
    "trained_models",
]
