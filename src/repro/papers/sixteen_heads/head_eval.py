"""Scoring a model of the family under head masks, on fixed evaluation sets.

An evaluator holds a trained model and named evaluation sets ("test", "test_ood", ...) and answers
``evaluate(masks, split) -> Evaluation`` (and ``evaluate_many(masks_list, split)`` for a sweep): the corpus score (in points, 0-100), per-example
statistics whose sums give that score, so that paired significance tests and bootstrap resamples
need no second pass, and the mean cross-entropy of the gold labels (teacher-forced target tokens
for translation). The loss is continuous where the score is not: single-head ablations that leave
a score unchanged still differ in loss, which orders them (the oracle's tie-break). Both evaluators
share everything the unmasked model computes:

- `ClassifierEvaluator` (a `Transformer` classifier; accuracy, F1 or Matthews correlation): the
  residual stream entering every layer under the full model is cached per set, and a masked
  forward starts at the first layer whose mask differs from all ones (single-head and
  keep-one-head sweeps then cost half a forward on average).
- `TranslationEvaluator` (an `EncoderDecoder`; corpus BLEU of greedy decodes, sacrebleu on token
  ids): the encoder output of the full model is cached per set and reused whenever the Enc-Enc
  mask is whole; decoding caches keys and values (repro.analysis.decoding), and a sweep decodes the
  set under several masks in one batch (a mask row per sentence), since a decoding step of these
  small models costs nearly the same for a few times more rows.

Masks are ``{type: [layers, heads]}`` as in repro.analysis.heads (None = the full model).
Both run on the device of the model they are given (repro.analysis.device): the sets stay on the
CPU and each batch is moved there; the classifier's residual cache and every result come back to
the CPU (the cache of a paper-scale set would not fit beside the model on a GPU).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from repro.analysis import heads as H
from repro.analysis.bleu import bleu_from_stats, ids_to_text, sentence_stats
from repro.analysis.decoding import cached_greedy_decode
from repro.analysis.device import model_device
from repro.analysis.metrics import CLASSIFICATION_METRICS, classification_score, confusion_stats
from repro.analysis.significance import bootstrap_indices, mcnemar_p, paired_bleu_p, paired_bootstrap_p
from repro.models import EncoderDecoder, Transformer


@dataclass(frozen=True)
class Evaluation:
    """score: the corpus metric in points (0-100); stats: per-example statistics [N, k]; loss: the mean
    cross-entropy of the gold labels or target tokens in nats (NaN where not computed)."""

    score: float
    stats: np.ndarray
    loss: float = float("nan")


# --------------------------------------------------------------------------- evaluators


class ClassifierEvaluator:
    """A `Transformer` classifier on fixed sets {name: (input_ids [N,T], labels [N])} (see module docstring)."""

    def __init__(
        self,
        model: Transformer,
        sets: Mapping[str, tuple[torch.Tensor, torch.Tensor]],
        *,
        metric: str = "accuracy",
        pad_id: int = 0,
        batch_size: int = 500,
        bootstrap_resamples: int = 1000,
        bootstrap_seed: int = 0,
    ):
        if not isinstance(model, Transformer) or model.cfg.output != "classifier":
            raise TypeError("ClassifierEvaluator needs a Transformer with output='classifier'")
        if metric not in CLASSIFICATION_METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose one of: {', '.join(CLASSIFICATION_METRICS)}")
        self.model = model.eval()
        self.device = model_device(model)
        self.metric = metric
        self.n_classes = int(model.cfg.n_classes)
        self.pad_id = pad_id
        self.batch_size = batch_size
        self.sets = {name: (ids, labels.numpy()) for name, (ids, labels) in sets.items()}
        self._resample_seed = (bootstrap_resamples, bootstrap_seed)
        self._resid: dict[str, list[torch.Tensor]] = {}  # per set: residual entering each layer, full model

    def set_names(self) -> list[str]:
        return list(self.sets)

    def _residuals(self, name: str) -> list[torch.Tensor]:
        if name not in self._resid:
            ids, _ = self._set(name)
            layers = range(self.model.cfg.n_layers)
            wanted = [f"blocks.{layer}.hook_resid_pre" for layer in layers]
            chunks: dict[str, list[torch.Tensor]] = {w: [] for w in wanted}
            with torch.no_grad():
                for rows in _batches(len(ids), self.batch_size):
                    batch = ids[rows].to(self.device)
                    _, cache = self.model.run_with_cache(batch, names=wanted, padding_mask=batch != self.pad_id)
                    for w in wanted:
                        chunks[w].append(cache[w].cpu())
            self._resid[name] = [torch.cat(chunks[w]) for w in wanted]
        return self._resid[name]

    def _set(self, name: str):
        if name not in self.sets:
            raise KeyError(f"no evaluation set {name!r}; the evaluator has {', '.join(self.sets)}")
        return self.sets[name]

    @torch.no_grad()
    def logits(self, masks: Mapping[str, torch.Tensor] | None, name: str) -> torch.Tensor:
        """Class logits [N, C] of a set under ``masks``, starting at the first changed layer."""
        ids, _ = self._set(name)
        mask = None if masks is None else masks[H.SELF]
        start = None if masks is None else H.first_changed_layer(masks, H.SELF)
        model = self.model
        n_layers = model.cfg.n_layers
        start = n_layers if start is None else start
        resid = self._residuals(name)[start] if start < n_layers else None
        mask = None if mask is None else mask.to(self.device)
        out = []
        for rows in _batches(len(ids), self.batch_size):
            batch = ids[rows].to(self.device)
            padding = batch != self.pad_id
            if start == n_layers:  # nothing masked: the last cached residual is one layer short
                out.append(model(batch, padding_mask=padding).cpu())
                continue
            x = resid[rows].to(self.device)
            for layer in range(start, n_layers):
                x = model.blocks[layer](x, head_mask=mask[layer], padding_mask=padding)
            # The tail of Transformer.forward (tests check the two agree).
            x = model.hook_resid_final(x)
            if model.final_norm is not None:
                x = model.final_norm(x)
            out.append(model.head(x, padding).cpu())
        return torch.cat(out)

    def evaluate(self, masks: Mapping[str, torch.Tensor] | None, name: str) -> Evaluation:
        _, labels = self._set(name)
        logits = self.logits(masks, name)
        stats = confusion_stats(logits.argmax(dim=-1).numpy(), labels, self.n_classes)
        loss = F.cross_entropy(logits.double(), torch.from_numpy(labels).long()).item()
        return Evaluation(float(classification_score(stats.sum(axis=0), self.metric, self.n_classes)), stats, loss)

    def evaluate_many(self, masks_list: Sequence[Mapping[str, torch.Tensor] | None], name: str) -> list[Evaluation]:
        """`evaluate` under each of several masks (one after the other: the residual cache already shares the work)."""
        return [self.evaluate(masks, name) for masks in masks_list]

    def p_value(self, base: Evaluation, other: Evaluation) -> float:
        """McNemar's exact test for accuracy; paired bootstrap for F1 and MCC."""
        if self.metric == "accuracy":
            diagonal = np.arange(self.n_classes) * (self.n_classes + 1)
            return mcnemar_p(base.stats[:, diagonal].sum(axis=1), other.stats[:, diagonal].sum(axis=1))
        n_resamples, seed = self._resample_seed
        indices = bootstrap_indices(len(base.stats), n_resamples, seed)
        return paired_bootstrap_p(
            base.stats, other.stats, lambda s: classification_score(s, self.metric, self.n_classes), indices
        )


class TranslationEvaluator:
    """An `EncoderDecoder` on fixed sets {name: (src [N,S], tgt [N,T] = BOS y EOS PAD...)}; corpus BLEU."""

    metric = "bleu"

    def __init__(
        self,
        model: EncoderDecoder,
        sets: Mapping[str, tuple[torch.Tensor, torch.Tensor]],
        *,
        bos_id: int,
        eos_id: int,
        pad_id: int = 0,
        extra_tokens: int = 8,
        batch_size: int = 500,
        sweep_batch_rows: int = 2000,
        bootstrap_resamples: int = 1000,
        bootstrap_seed: int = 0,
    ):
        if not isinstance(model, EncoderDecoder):
            raise TypeError("TranslationEvaluator needs an EncoderDecoder")
        self.model = model.eval()
        self.device = model_device(model)
        self.bos_id, self.eos_id, self.pad_id = bos_id, eos_id, pad_id
        self.batch_size = batch_size
        self.sweep_batch_rows = sweep_batch_rows
        self.extra_tokens = extra_tokens
        self.sets = {}
        self.targets = {}  # teacher-forced targets [N, T+1] per set, for the loss
        for name, (src, tgt) in sets.items():
            references = [ids_to_text(row[1:], stop_ids=[eos_id], skip_ids=[pad_id, bos_id]) for row in tgt.tolist()]
            self.sets[name] = (src, references, tgt.shape[1] - 1)
            self.targets[name] = tgt
        self._resample = (bootstrap_resamples, bootstrap_seed)
        self._indices: dict[int, np.ndarray] = {}
        self._memory: dict[str, list[torch.Tensor]] = {}

    def set_names(self) -> list[str]:
        return list(self.sets)

    def _set(self, name: str):
        if name not in self.sets:
            raise KeyError(f"no evaluation set {name!r}; the evaluator has {', '.join(self.sets)}")
        return self.sets[name]

    def max_len(self, name: str) -> int:
        """Decoding budget: the longest reference (with EOS) plus ``extra_tokens``, within the positions."""
        _, _, longest = self._set(name)
        return min(longest + self.extra_tokens, self.model.decoder.cfg.max_seq_len)

    def _memories(self, name: str) -> list[torch.Tensor]:
        """Per batch of a set: the full model's encoder output, computed once (it stays on the model's device)."""
        if name not in self._memory:
            src, _, _ = self._set(name)
            self._memory[name] = [
                self.model.encode(batch, batch != self.pad_id)
                for batch in (src[rows].to(self.device) for rows in _batches(len(src), self.batch_size))
            ]
        return self._memory[name]

    def _encoder_whole(self, masks: Mapping[str, torch.Tensor] | None) -> bool:
        return masks is None or H.first_changed_layer(masks, "enc_self") is None

    def _mask_groups(self, masks_list: Sequence[Mapping[str, torch.Tensor] | None], name: str) -> list[list[int]]:
        """Indices of ``masks_list`` in groups decoded together: at most ``sweep_batch_rows`` sentences
        (the set's rows once per mask), and never masks that keep the encoder whole (which reuse its
        cached output) beside masks that change it."""
        src, _, _ = self._set(name)
        per_group = max(1, self.sweep_batch_rows // max(1, min(self.batch_size, len(src))))
        groups = []
        for whole in (True, False):
            indices = [i for i, masks in enumerate(masks_list) if self._encoder_whole(masks) == whole]
            groups += [indices[start : start + per_group] for start in range(0, len(indices), per_group)]
        return groups

    def _row_masks(self, masks_group: Sequence[Mapping[str, torch.Tensor] | None], n: int):
        """The model's head_mask for ``n`` sentences under each mask in turn: {type: [layers, k·n, heads, 1]}."""
        full = H.full_masks(self.model)
        stacked = {
            kind: torch.stack([(full if masks is None else masks)[kind] for masks in masks_group], dim=1)
            .repeat_interleave(n, dim=1)
            .unsqueeze(-1)
            .to(self.device)
            for kind in full
        }
        return H.model_mask(self.model, stacked)

    @torch.no_grad()
    def _run(self, masks_group, name: str, *, decode: bool = True, loss: bool = True):
        """(hypotheses per mask, mean target-token loss per mask) of a set under each mask of a group."""
        src, _, _ = self._set(name)
        tgt = self.targets[name]
        k = len(masks_group)
        memories = self._memories(name) if all(map(self._encoder_whole, masks_group)) else None
        hypotheses: list[list[str]] = [[] for _ in range(k)]
        totals, count = np.zeros(k), 0
        for index, rows in enumerate(_batches(len(src), self.batch_size)):
            batch = src[rows].to(self.device)
            n = len(batch)
            src_k = batch.repeat(k, 1)
            real = src_k != self.pad_id
            head_mask = self._row_masks(masks_group, n)
            if memories is not None:
                memory = memories[index].repeat(k, 1, 1)
            else:
                memory = self.model.encode(src_k, real, head_mask)
            if decode:
                out = cached_greedy_decode(
                    self.model,
                    src_k,
                    self.bos_id,
                    self.eos_id,
                    self.max_len(name),
                    src_padding_mask=real,
                    head_mask=head_mask,
                    memory=memory,
                )
                for j, row in enumerate(out.tolist()):
                    hypotheses[j // n].append(
                        ids_to_text(row, stop_ids=[self.eos_id], skip_ids=[self.pad_id, self.bos_id])
                    )
            if loss:
                target = tgt[rows].to(self.device)
                decoder_in, labels = target[:, :-1].repeat(k, 1), target[:, 1:].repeat(k, 1)
                logits = self.model.decode(decoder_in, memory, real, decoder_in != self.pad_id, head_mask)
                nll = F.cross_entropy(
                    logits.double().flatten(0, 1), labels.flatten(), ignore_index=self.pad_id, reduction="none"
                )
                totals += nll.view(k, -1).sum(dim=1).cpu().numpy()
                count += int((target[:, 1:] != self.pad_id).sum())
        return hypotheses, list(totals / max(count, 1))

    def decode(self, masks: Mapping[str, torch.Tensor] | None, name: str) -> list[str]:
        """Greedy hypotheses of a set under ``masks``, as token-id strings."""
        return self._run([masks], name, loss=False)[0][0]

    def loss(self, masks: Mapping[str, torch.Tensor] | None, name: str) -> float:
        """Mean teacher-forced cross-entropy (no label smoothing) over a set's real target tokens."""
        return self._run([masks], name, decode=False)[1][0]

    def evaluate(self, masks: Mapping[str, torch.Tensor] | None, name: str) -> Evaluation:
        return self.evaluate_many([masks], name)[0]

    def evaluate_many(self, masks_list: Sequence[Mapping[str, torch.Tensor] | None], name: str) -> list[Evaluation]:
        """`evaluate` under each of several masks. The set is decoded under several masks in one batch (each
        sentence once per mask, with that mask's row): the same hypotheses as one call per mask in a
        fraction of the time, since a decoding step of these small models costs little more for more rows."""
        _, references, _ = self._set(name)
        results: list[Evaluation | None] = [None] * len(masks_list)
        for group in self._mask_groups(masks_list, name):
            hypotheses, losses = self._run([masks_list[i] for i in group], name)
            for i, hyps, mean_loss in zip(group, hypotheses, losses):
                stats = sentence_stats(hyps, references)
                results[i] = Evaluation(float(bleu_from_stats(stats.sum(axis=0))), stats, mean_loss)
        return results

    def p_value(self, base: Evaluation, other: Evaluation) -> float:
        """Paired bootstrap resampling of BLEU (Koehn 2004; sacrebleu's paired_bs statistic)."""
        n = len(base.stats)
        if n not in self._indices:
            n_resamples, seed = self._resample
            self._indices[n] = bootstrap_indices(n, n_resamples, seed)
        return paired_bleu_p(base.stats, other.stats, self._indices[n])


def make_evaluator(model, sets, **kwargs):
    """The evaluator for ``model``'s kind (classifier or translator)."""
    if isinstance(model, EncoderDecoder):
        return TranslationEvaluator(model, sets, **kwargs)
    return ClassifierEvaluator(model, sets, **kwargs)


def _batches(n: int, size: int):
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))
