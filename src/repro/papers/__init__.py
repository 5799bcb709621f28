"""The four works this pipeline reproduces, by id, and where each one's code lives.

A paper's package, ``repro.papers.<id>``, holds everything particular to that paper: its commands
(``commands``: the ``python -m repro <command>`` actions and the config section check), its
analyses, its claims (``claims``, with its DEVIATIONS) and its plot helpers. The shared library
(models, training, data, hub, pipeline, analysis) imports no paper package; it reaches a paper's
parts through this registry, by name, when it needs them.

Papers not moved yet keep their parts in the per-kind folders (repro.claims.<id>,
repro.commands.<id>, ...); ``part`` finds either.
"""

from __future__ import annotations

import importlib.util

PAPERS = {
    "simplified_blocks": 'He & Hofmann, "Simplifying Transformer Blocks", ICLR 2024 (arXiv 2311.01906)',
    "sixteen_heads": 'Michel, Levy & Neubig, "Are Sixteen Heads Really Better than One?", NeurIPS 2019 (arXiv 1905.10650)',
    "param_allocation": 'Yu, Jiang, Cheng, Yu, Li & Li, "Allocation of Parameters in Transformers", arXiv 2510.03784, 2025',
    "layer_diversity": (
        'Kamigaito et al., "Diversity of Transformer Layers: One Aspect of Parameter Scaling Laws", '
        "arXiv 2505.24009, 2025"
    ),
}


def has_package(paper: str) -> bool:
    return paper in PAPERS and importlib.util.find_spec(f"repro.papers.{paper}") is not None


def part(paper: str, name: str) -> str:
    """The module name of one part of a paper ("claims", "commands"), without importing it."""
    return f"repro.papers.{paper}.{name}" if has_package(paper) else f"repro.{name}.{paper}"
