"""Named hook points, in the spirit of TransformerLens' `hook_points.py`.

Every activation an analysis reads passes through a `HookPoint`, an identity module
that knows its dotted name (e.g. ``blocks.2.attn.hook_z``). Analyses attach functions
to names instead of editing the model:

    with model.hooks({"blocks.0.attn.hook_z": zero_head_3}):
        logits = model(tokens)
    logits, cache = model.run_with_cache(tokens, names=lambda n: n.endswith("hook_resid_post"))

A hook function receives ``(tensor, name)`` and returns a replacement tensor or None.
With no hook attached a HookPoint costs one empty loop, so training is unaffected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping

import torch
from torch import nn

HookFn = Callable[[torch.Tensor, str], torch.Tensor | None]


class HookPoint(nn.Module):
    """Identity on its input, except for the functions attached to it."""

    def __init__(self) -> None:
        super().__init__()
        self.name = ""
        self.fns: list[HookFn] = []

    @property
    def active(self) -> bool:
        return bool(self.fns)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for fn in self.fns:
            out = fn(x, self.name)
            if out is not None:
                x = out
        return x


class HookedModule(nn.Module):
    """Mixin for the top-level models: names its hook points and manages hooks."""

    def name_hook_points(self) -> None:
        for name, module in self.named_modules():
            if isinstance(module, HookPoint):
                module.name = name

    def hook_points(self) -> dict[str, HookPoint]:
        return {m.name: m for m in self.modules() if isinstance(m, HookPoint)}

    def hook_names(self) -> list[str]:
        return list(self.hook_points())

    @contextlib.contextmanager
    def hooks(self, fns: Mapping[str, HookFn | list[HookFn]]) -> Iterator[None]:
        """Attach hook functions by name for the duration of the block."""
        points = self.hook_points()
        missing = [name for name in fns if name not in points]
        if missing:
            raise KeyError(f"unknown hook point(s) {missing}; see model.hook_names()")
        added: list[tuple[HookPoint, HookFn]] = []
        try:
            for name, fn_or_list in fns.items():
                for fn in fn_or_list if isinstance(fn_or_list, list) else [fn_or_list]:
                    points[name].fns.append(fn)
                    added.append((points[name], fn))
            yield
        finally:
            for point, fn in added:
                point.fns.remove(fn)

    def run_with_cache(
        self,
        *args,
        names: Callable[[str], bool] | list[str] | None = None,
        detach: bool = True,
        **kwargs,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Run the model and return (output, {hook name: activation})."""
        selected = [n for n in self.hook_names() if _wanted(n, names)]
        cache: dict[str, torch.Tensor] = {}

        def store(x: torch.Tensor, name: str) -> None:
            cache[name] = x.detach() if detach else x

        with self.hooks({name: store for name in selected}):
            out = self(*args, **kwargs)
        return out, cache

    @torch.no_grad()
    def cache_in_batches(self, tokens: torch.Tensor, names: list[str], batch_size: int) -> dict[str, torch.Tensor]:
        """The activations at hook points `names` for every row of `tokens`, concatenated over batches of
        `batch_size` rows run in eval mode (the training mode is restored afterwards)."""
        parts: dict[str, list[torch.Tensor]] = {name: [] for name in names}

        def store(x: torch.Tensor, name: str) -> None:
            parts[name].append(x.detach())

        was_training = self.training
        self.eval()
        try:
            with self.hooks({name: store for name in names}):
                for start in range(0, len(tokens), batch_size):
                    self(tokens[start : start + batch_size])
        finally:
            self.train(was_training)
        return {name: torch.cat(chunks) for name, chunks in parts.items()}


def _wanted(name: str, names: Callable[[str], bool] | list[str] | None) -> bool:
    if names is None:
        return True
    if callable(names):
        return names(name)
    return name in names
