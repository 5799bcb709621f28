"""Adding a layer without training it: a copy of a trained block inserted right after the original.

`duplicate_block(model, layer)` returns a model of depth L+1 whose blocks are
0..layer, layer (again), layer+1..L−1, with the weights of the trained ``model`` (catalog Fig. 7,
optional intervention: a duplicated layer brings no new information of its own, against a layer
trained as part of a deeper model). The copy reads the residual stream after the original, so
the two members differ; only the weights are shared.
"""

from __future__ import annotations

import dataclasses
import re

from repro.models import Transformer

_BLOCK_KEY = re.compile(r"^blocks\.(\d+)\.(.+)$")


def duplicate_block(model: Transformer, layer: int) -> Transformer:
    """A new model (same dtype, eval mode) with block ``layer`` of ``model`` inserted again after itself."""
    cfg = model.cfg
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer {layer} does not exist in a model of {cfg.n_layers} layers")

    def insert(values: tuple) -> tuple:
        return values[: layer + 1] + (values[layer],) + values[layer + 1 :]

    new_cfg = dataclasses.replace(
        cfg, n_layers=cfg.n_layers + 1, n_heads=insert(tuple(cfg.n_heads)), head_dim=insert(tuple(cfg.head_dim))
    )
    state = {}
    for key, value in model.state_dict().items():
        match = _BLOCK_KEY.match(key)
        if match is None:
            state[key] = value.clone()
            continue
        index, rest = int(match.group(1)), match.group(2)
        state[f"blocks.{index + (index > layer)}.{rest}"] = value.clone()
        if index == layer:
            state[f"blocks.{layer + 1}.{rest}"] = value.clone()
    dtype = next(model.parameters()).dtype
    duplicated = Transformer(new_cfg).to(dtype)
    duplicated.load_state_dict(state, strict=True)
    return duplicated.eval()


__all__ = ["duplicate_block"]
