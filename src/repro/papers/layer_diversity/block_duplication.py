"""Adding a layer without training it: a copy of a trained block inserted right after the original.

`duplicate_block(model, layer)` returns a model of depth L+1 whose blocks are
0..layer, layer (again), layer+1..L−1, with the weights of the trained ``model`` (catalog Fig. 7,
optional intervention: a duplicated layer brings no new information of its own, against a layer
trained as part of a deeper model). The copy reads the residual stream after the original, so
the two members differ; only the weights are shared.
"""

from __future__ import annotations

import dataclasses

from repro.models import Transformer


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
    dtype = next(model.parameters()).dtype
    duplicated = Transformer(new_cfg).to(dtype)
    outside = {key: value for key, value in model.state_dict().items() if not key.startswith("blocks.")}
    missing, unexpected = duplicated.load_state_dict(outside, strict=False)
    assert not unexpected and all(key.startswith("blocks.") for key in missing)
    sources = list(range(layer + 1)) + list(range(layer, cfg.n_layers))  # block `layer` twice
    for block, source in zip(duplicated.blocks, sources, strict=True):
        block.load_state_dict(model.blocks[source].state_dict(), strict=True)
    return duplicated.eval()


__all__ = ["duplicate_block"]
