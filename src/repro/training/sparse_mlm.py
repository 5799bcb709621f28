"""Masked-LM loss with sparse prediction: logits only at the masked positions (as cramming BERT).

`MaskedLMTask` computes logits at every position, [B, T, V], and ignores the unselected ones;
with a quarter of the positions masked, three quarters of the output layer is wasted work, which
would hide the blocks' speed differences in an equal-time comparison. This task expects a model
built with ``output="none"`` and tied embeddings (it returns hidden states [B, T, d]) and
applies ``model.unembed`` to the selected positions only. The loss, masking, batches and
evaluation are otherwise those of `MaskedLMTask`, and the value of the loss is the same.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.training.tasks import IGNORE_INDEX, LossOutput, MaskedLMTask


class SparseMaskedLMTask(MaskedLMTask):
    """`MaskedLMTask` whose loss unembeds only the masked positions (see module docstring)."""

    @staticmethod
    def _selected_logits(model: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        """(logits of the masked positions [n_selected, V], the selection [B, T])."""
        output = getattr(getattr(model, "cfg", None), "output", "none")
        hidden = model(batch["input_ids"]) if output == "none" else None  # [B, T, d]
        labels = batch["labels"]  # [B, T]
        if hidden is None or hidden.dim() != 3 or hidden.shape[:2] != labels.shape:
            raise ValueError(
                f"SparseMaskedLMTask needs a model with output='none' returning [B, T, d]; got output={output!r}"
            )
        selected = labels != IGNORE_INDEX  # [B, T]
        return model.unembed(hidden[selected]), selected

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        logits, selected = self._selected_logits(model, batch)
        loss = F.cross_entropy(logits, batch["labels"][selected])
        return LossOutput(loss, selected.numel(), selected.sum())

    def row_losses(self, model: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        """Per row of the batch: its summed loss over the masked positions [B] and their number [B]."""
        logits, selected = self._selected_logits(model, batch)
        terms = F.cross_entropy(logits.float(), batch["labels"][selected], reduction="none").double()
        rows = selected.nonzero()[:, 0]  # [n_selected] the row of each masked position, in logits' order
        sums = torch.zeros(selected.shape[0], dtype=torch.float64, device=terms.device).index_add_(0, rows, terms)
        return sums, selected.sum(dim=1)

    def fingerprint(self) -> dict:
        return dict(super().fingerprint(), task=type(self).__name__)
