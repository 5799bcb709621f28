"""The four works this pipeline reproduces, the studies across them, by id, and where each one's code lives.

Each paper's package, ``repro.papers.<id>``, holds everything particular to that paper, in parts
of the same names:

    checks     `check_section(config, paper)`: what the config schema cannot see, run before any job
    commands   `register(subparsers)`: the `python -m repro <id> <action>` actions
    claims     the registered claims of every figure and table, and DEVIATIONS
    specs      the specs of its jobs, built from the config (the rules pass them to the commands)
    (others)   the paper's analyses and plot helpers

The shared library (models, training, data, hub, pipeline, analysis) imports no paper package (an
import-linter contract in pyproject.toml holds it to that); it reaches a paper's parts by name,
through `part`, when it needs them.
"""

from __future__ import annotations

PAPERS = {
    "simplified_blocks": 'He & Hofmann, "Simplifying Transformer Blocks", ICLR 2024 (arXiv 2311.01906)',
    "sixteen_heads": 'Michel, Levy & Neubig, "Are Sixteen Heads Really Better than One?", NeurIPS 2019 (arXiv 1905.10650)',
    "param_allocation": 'Yu, Jiang, Cheng, Yu, Li & Li, "Allocation of Parameters in Transformers", arXiv 2510.03784, 2025',
    "layer_diversity": (
        'Kamigaito et al., "Diversity of Transformer Layers: One Aspect of Parameter Scaling Laws", '
        "arXiv 2505.24009, 2025"
    ),
    # Not a paper: questions none of the four asked, put to the runs of the others (new findings).
    "cross_paper": "Studies across the four works (this project's own questions, asked of their runs)",
}


def part(paper: str, name: str) -> str:
    """The module name of one part of a paper ("checks", "commands", "claims"), without importing it."""
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; the papers are: {', '.join(PAPERS)}")
    return f"repro.papers.{paper}.{name}"
