"""`seed_offset`: the same experiments with other model seeds, to see which verdicts are stable.

With ``seed_offset: k`` every list of model seeds in a paper section (every key ending in "seeds":
`seeds`, `extra_seeds`, `finetune_seeds`) is shifted by k, and so is every key that names one of those
seeds (a paper lists them in `SEED_REFERENCES` of its specs module, as key paths inside its section).
Data seeds (the corpus split, the synthetic tasks' samples, the simulations) stay: the shifted run
trains other models on the same data. Its results go to ``results/<scale>-seeds+<k>/``, beside the
unshifted run, and `python -m repro compare` lists the verdicts that differ.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Iterable


def seed_references(paper: str) -> tuple[tuple[str, ...], ...]:
    """Key paths, inside the paper's section, of the scalars that name one of its model seeds."""
    from repro.papers import part

    return tuple(getattr(importlib.import_module(part(paper, "specs")), "SEED_REFERENCES", ()))


def _shift_lists(node, offset: int) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key.endswith("seeds") and isinstance(value, list):
                node[key] = [int(seed) + offset for seed in value]
            else:
                _shift_lists(value, offset)


def shift_model_seeds(config: dict, papers: Iterable[str]) -> dict:
    """A copy of `config` whose model seeds in the sections of `papers` are shifted by its
    `seed_offset` (0 or absent: an unchanged copy)."""
    offset = int(config.get("seed_offset", 0) or 0)
    shifted = copy.deepcopy(config)
    if offset == 0:
        return shifted
    for paper in papers:
        if paper not in shifted:
            continue
        _shift_lists(shifted[paper], offset)
        for path in seed_references(paper):
            node = shifted[paper]
            for key in path[:-1]:
                node = node.get(key) if isinstance(node, dict) else None
            if isinstance(node, dict) and path[-1] in node:
                node[path[-1]] = int(node[path[-1]]) + offset
    return shifted


def results_name(scale: str, offset: int) -> str:
    """The results folder of a run: ``<scale>``, or ``<scale>-seeds+<offset>`` with shifted seeds."""
    return scale if not offset else f"{scale}-seeds+{int(offset)}"
