"""Training tasks: what a batch is and what the loss is. The trainer knows nothing else.

A task holds its data as CPU tensors and provides

  train_batch(step, batch_size, seed) -> dict[str, Tensor]
      The batch of update number `step` (0-based). A pure function of its arguments:
      examples are visited in epochs, each epoch in a permutation drawn from a
      generator seeded by (seed, epoch), so a resumed run needs no sampler state.
  eval_batches() -> Iterable[dict[str, Tensor]]
      The fixed held-out set, in a fixed order (any randomness, e.g. MLM masking,
      is drawn once at construction from a fixed seed).
  loss(model, batch) -> LossOutput(loss, n_tokens, n_targets)
      `loss` is the mean over the batch's `n_targets` loss terms; `n_tokens` counts the
      positions the model processed (padding included), for throughput metrics.
      `n_targets` may be a 0-dim tensor, so that no host sync is needed per step.
  row_losses(model, batch) -> (loss sums [B], target counts [B])   (language-model tasks only)
      The summed loss and the number of loss terms of each example of a batch, for an
      evaluation whose unit is the example (a bootstrap over held-out chunks, `repro.training.heldout`).
  fingerprint() -> dict
      JSON-able identity of the task and its data (SHA-256 of the tensors), part of
      the run-config hash that guards resuming.

Padding masks given to models are BoolTensors that are True at real tokens and False
at padding (the convention of repro.models and HF's attention_mask); see `padding_mask`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import NamedTuple, Protocol, runtime_checkable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.training.seeding import generator

IGNORE_INDEX = -100  # label value that F.cross_entropy skips


class LossOutput(NamedTuple):
    loss: Tensor  # 0-dim, mean over the n_targets loss terms of the batch
    n_tokens: int  # positions processed by the model (padding included)
    n_targets: Tensor | int  # loss terms averaged in `loss` (used to weight evaluation averages)


@runtime_checkable
class Task(Protocol):
    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]: ...

    def eval_batches(self) -> Iterable[dict[str, Tensor]]: ...

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput: ...

    def fingerprint(self) -> dict: ...


def tensor_digest(tensor: Tensor | None) -> str | None:
    """SHA-256 of a tensor's dtype, shape and bytes (None for None)."""
    if tensor is None:
        return None
    t = tensor.detach().cpu().contiguous()
    h = hashlib.sha256(f"{t.dtype}{tuple(t.shape)}".encode())
    h.update(t.view(torch.uint8).numpy().data if t.numel() else b"")
    return h.hexdigest()


def task_fingerprint(task: object, /, *tensors: str, **settings: object) -> dict:
    """The usual task fingerprint: ``task`` (the class name), the `tensor_digest` of each named tensor
    attribute of `task`, then `settings`, in that order."""
    return {
        "task": type(task).__name__,
        **{name: tensor_digest(getattr(task, name)) for name in tensors},
        **settings,
    }


def padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """BoolTensor like `ids`: True at real tokens, False where `ids` is padding."""
    return ids != pad_id


class EpochSampler:
    """Indices of the examples in each batch: epoch e visits a permutation seeded by (seed, e).

    An epoch has `n_examples // batch_size` batches; the examples left over at the
    end of an epoch's permutation are skipped that epoch (a different set each epoch).
    The permutation of the current epoch is cached, so consecutive steps cost a slice.
    """

    def __init__(self, n_examples: int):
        self.n_examples = n_examples
        self._cache: tuple[tuple[int, int], Tensor] | None = None

    def steps_per_epoch(self, batch_size: int) -> int:
        if batch_size > self.n_examples:
            raise ValueError(f"batch_size={batch_size} exceeds the {self.n_examples} training examples")
        return self.n_examples // batch_size

    def epoch(self, step: int, batch_size: int) -> int:
        """The 0-based epoch that update `step` belongs to."""
        return step // self.steps_per_epoch(batch_size)

    def indices(self, step: int, batch_size: int, seed: int) -> Tensor:  # LongTensor[batch_size]
        per_epoch = self.steps_per_epoch(batch_size)
        epoch, within = divmod(step, per_epoch)
        if self._cache is None or self._cache[0] != (seed, epoch):
            order = torch.randperm(self.n_examples, generator=generator(seed, "train-order", epoch))
            self._cache = ((seed, epoch), order)
        return self._cache[1][within * batch_size : (within + 1) * batch_size]


def _eval_slices(n: int, batch_size: int) -> Iterator[slice]:
    for start in range(0, n, batch_size):
        yield slice(start, min(start + batch_size, n))


def _dense_row_losses(logits: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
    """logits [B, T, V], labels [B, T] (IGNORE_INDEX where there is no target) -> per-row loss sums [B]
    (float64) and target counts [B]."""
    terms = F.cross_entropy(logits.transpose(1, 2).float(), labels, ignore_index=IGNORE_INDEX, reduction="none")
    return terms.double().sum(dim=1), (labels != IGNORE_INDEX).sum(dim=1)


def _check_rows(name: str, tensor: Tensor, dims: int, dtype_kind: str = "int") -> None:
    if tensor.dim() != dims:
        raise ValueError(f"{name} must have {dims} dimensions, got shape {tuple(tensor.shape)}")
    if dtype_kind == "int" and (tensor.is_floating_point() or tensor.dtype == torch.bool):
        raise ValueError(f"{name} must hold integer token ids, got dtype {tensor.dtype}")


def next_token_labels(tokens: Tensor) -> Tensor:
    """[B, T] -> [B, T] next-token labels: labels[:, t] = tokens[:, t+1], last column ignored."""
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[:, :-1] = tokens[:, 1:]
    return labels


class LanguageModelTask:
    """Next-token prediction on fixed-length chunks (causal LM, e.g. the CodeParrot stand-in).

    The model reads the whole chunk [B, T] and the loss averages the T-1 next-token
    predictions (as HF `GPT2LMHeadModel` with labels = input_ids): the logits of the
    last position have no target. Labels carry IGNORE_INDEX there rather than
    slicing the logits, which would copy a [B, T-1, V] tensor.
    """

    def __init__(self, train_tokens: Tensor, eval_tokens: Tensor, *, eval_batch_size: int = 64):
        _check_rows("train_tokens", train_tokens, 2)
        _check_rows("eval_tokens", eval_tokens, 2)
        if train_tokens.shape[1] < 2:
            raise ValueError("chunks need at least 2 tokens to have a next-token target")
        self.train_tokens = train_tokens  # [N, T]
        self.eval_tokens = eval_tokens  # [M, T]
        self.eval_batch_size = eval_batch_size
        self.sampler = EpochSampler(len(train_tokens))

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        tokens = self.train_tokens[self.sampler.indices(step, batch_size, seed)]
        return {"input_ids": tokens, "labels": next_token_labels(tokens)}

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        for rows in _eval_slices(len(self.eval_tokens), self.eval_batch_size):
            tokens = self.eval_tokens[rows]
            yield {"input_ids": tokens, "labels": next_token_labels(tokens)}

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        logits = model(batch["input_ids"])  # [B, T, V]
        labels = batch["labels"]  # [B, T]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)
        batch_size, length = labels.shape
        return LossOutput(loss, batch_size * length, batch_size * (length - 1))

    def row_losses(self, model: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        """Per chunk of the batch: its summed next-token loss [B] and its T-1 targets [B]."""
        return _dense_row_losses(model(batch["input_ids"]), batch["labels"])

    def fingerprint(self) -> dict:
        return task_fingerprint(self, "train_tokens", "eval_tokens", eval_batch_size=self.eval_batch_size)


class MaskedLMTask:
    """Masked-token prediction (BERT/cramming): each position is selected with probability
    `mask_prob`; a selected token becomes `mask_token_id` with probability 0.8, a uniformly
    random id in [0, vocab_size) with probability 0.1, and stays unchanged otherwise. The
    loss averages over the selected positions only. Ids in `special_ids` are never selected.

    Training masks depend on (seed, step); the held-out masks are drawn once from `eval_seed`.
    With `pad_id` set (padded rows rather than packed text), batches carry a padding mask taken from
    the unmasked tokens, and the model attends to real tokens only.
    """

    def __init__(
        self,
        train_tokens: Tensor,
        eval_tokens: Tensor,
        *,
        mask_token_id: int,
        vocab_size: int,
        mask_prob: float = 0.15,
        special_ids: Iterable[int] = (),
        eval_batch_size: int = 64,
        eval_seed: int = 0,
        pad_id: int | None = None,
    ):
        _check_rows("train_tokens", train_tokens, 2)
        _check_rows("eval_tokens", eval_tokens, 2)
        if not 0.0 < mask_prob < 1.0:
            raise ValueError(f"mask_prob={mask_prob!r} must be in (0, 1)")
        if not 0 <= mask_token_id < vocab_size:
            raise ValueError(f"mask_token_id={mask_token_id} must be in [0, vocab_size={vocab_size})")
        self.train_tokens = train_tokens  # [N, T]
        self.eval_tokens = eval_tokens  # [M, T]
        self.mask_token_id = mask_token_id
        self.vocab_size = vocab_size
        self.mask_prob = mask_prob
        self.special_ids = tuple(sorted(set(special_ids)))
        self.eval_batch_size = eval_batch_size
        self.eval_seed = eval_seed
        self.pad_id = pad_id
        if pad_id is not None:
            self.special_ids = tuple(sorted(set(self.special_ids) | {pad_id}))
        self.sampler = EpochSampler(len(train_tokens))
        self._eval_inputs, self._eval_labels = self.mask(eval_tokens, generator(eval_seed, "mlm-eval-mask"))

    def mask(self, tokens: Tensor, gen: torch.Generator) -> tuple[Tensor, Tensor]:
        """[B, T] tokens -> (model inputs [B, T], labels [B, T] with IGNORE_INDEX where not selected)."""
        selectable = torch.ones_like(tokens, dtype=torch.bool)
        for special in self.special_ids:
            selectable &= tokens != special
        selected = (torch.rand(tokens.shape, generator=gen) < self.mask_prob) & selectable
        if not selected.any():
            # An empty selection would make the mean loss NaN; select one selectable position instead.
            candidates = selectable.flatten().nonzero().squeeze(1)
            if len(candidates) == 0:
                raise ValueError("a batch has no position that may be masked (all tokens are special)")
            pick = candidates[torch.randint(len(candidates), (1,), generator=gen)]
            selected.view(-1)[pick] = True
        action = torch.rand(tokens.shape, generator=gen)
        random_ids = torch.randint(self.vocab_size, tokens.shape, generator=gen, dtype=tokens.dtype)
        inputs = tokens.clone()
        inputs[selected & (action < 0.8)] = self.mask_token_id
        to_random = selected & (action >= 0.8) & (action < 0.9)
        inputs[to_random] = random_ids[to_random]
        labels = torch.where(selected, tokens, torch.full_like(tokens, IGNORE_INDEX))
        return inputs, labels

    def _batch(self, inputs: Tensor, labels: Tensor, tokens: Tensor) -> dict[str, Tensor]:
        batch = {"input_ids": inputs, "labels": labels}
        if self.pad_id is not None:
            batch["padding_mask"] = padding_mask(tokens, self.pad_id)
        return batch

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        tokens = self.train_tokens[self.sampler.indices(step, batch_size, seed)]
        inputs, labels = self.mask(tokens, generator(seed, "mlm-mask", step))
        return self._batch(inputs, labels, tokens)

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        for rows in _eval_slices(len(self._eval_inputs), self.eval_batch_size):
            yield self._batch(self._eval_inputs[rows], self._eval_labels[rows], self.eval_tokens[rows])

    @staticmethod
    def _logits(model: nn.Module, batch: dict[str, Tensor]) -> Tensor:  # [B, T, V]
        mask = batch.get("padding_mask")
        return model(batch["input_ids"]) if mask is None else model(batch["input_ids"], padding_mask=mask)

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        logits = self._logits(model, batch)  # [B, T, V]
        labels = batch["labels"]  # [B, T]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)
        return LossOutput(loss, labels.numel(), (labels != IGNORE_INDEX).sum())

    def row_losses(self, model: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        """Per row of the batch: its summed loss over the masked positions [B] and their number [B]."""
        return _dense_row_losses(self._logits(model, batch), batch["labels"])

    def fingerprint(self) -> dict:
        return task_fingerprint(
            self,
            "train_tokens",
            "eval_tokens",
            mask_token_id=self.mask_token_id,
            vocab_size=self.vocab_size,
            mask_prob=self.mask_prob,
            special_ids=list(self.special_ids),
            eval_batch_size=self.eval_batch_size,
            eval_seed=self.eval_seed,
        ) | ({} if self.pad_id is None else {"pad_id": self.pad_id})


class ClassificationTask:
    """Sequence classification (or regression) from token ids.

    Integer labels [N] -> cross-entropy on the model's [B, C] logits. Floating labels
    [N] -> mean squared error on the single output [B, 1] (STS-B-like regression).
    Padding masks (True = real token), when given, are passed to the model unchanged as
    `padding_mask`.
    """

    def __init__(
        self,
        train_inputs: Tensor,
        train_labels: Tensor,
        eval_inputs: Tensor,
        eval_labels: Tensor,
        *,
        train_padding_mask: Tensor | None = None,
        eval_padding_mask: Tensor | None = None,
        eval_batch_size: int = 64,
    ):
        _check_rows("train_inputs", train_inputs, 2)
        _check_rows("eval_inputs", eval_inputs, 2)
        for name, labels, inputs in (
            ("train_labels", train_labels, train_inputs),
            ("eval_labels", eval_labels, eval_inputs),
        ):
            if labels.shape != inputs.shape[:1]:
                raise ValueError(f"{name} must have shape [{len(inputs)}], got {tuple(labels.shape)}")
        for name, mask, inputs in (
            ("train_padding_mask", train_padding_mask, train_inputs),
            ("eval_padding_mask", eval_padding_mask, eval_inputs),
        ):
            if mask is not None and (mask.shape != inputs.shape or mask.dtype != torch.bool):
                raise ValueError(f"{name} must be a bool tensor of shape {tuple(inputs.shape)}")
        self.train_inputs, self.train_labels, self.train_padding_mask = train_inputs, train_labels, train_padding_mask
        self.eval_inputs, self.eval_labels, self.eval_padding_mask = eval_inputs, eval_labels, eval_padding_mask
        self.eval_batch_size = eval_batch_size
        self.sampler = EpochSampler(len(train_inputs))

    @staticmethod
    def _batch(inputs: Tensor, labels: Tensor, mask: Tensor | None, rows: Tensor | slice) -> dict[str, Tensor]:
        batch = {"input_ids": inputs[rows], "labels": labels[rows]}
        if mask is not None:
            batch["padding_mask"] = mask[rows]
        return batch

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        rows = self.sampler.indices(step, batch_size, seed)
        return self._batch(self.train_inputs, self.train_labels, self.train_padding_mask, rows)

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        for rows in _eval_slices(len(self.eval_inputs), self.eval_batch_size):
            yield self._batch(self.eval_inputs, self.eval_labels, self.eval_padding_mask, rows)

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        outputs = model(batch["input_ids"], padding_mask=batch.get("padding_mask"))  # [B, C]
        labels = batch["labels"]  # [B]
        if labels.is_floating_point():
            loss = F.mse_loss(outputs.reshape(labels.shape), labels)
        else:
            loss = F.cross_entropy(outputs, labels)
        return LossOutput(loss, batch["input_ids"].numel(), len(labels))

    def fingerprint(self) -> dict:
        return task_fingerprint(
            self,
            "train_inputs",
            "train_labels",
            "train_padding_mask",
            "eval_inputs",
            "eval_labels",
            "eval_padding_mask",
            eval_batch_size=self.eval_batch_size,
        )


def label_smoothed_nll(logits: Tensor, target: Tensor, epsilon: float, ignore_index: int) -> Tensor:
    """fairseq's `label_smoothed_nll_loss`, averaged over the non-ignored targets.

    Per target: (1 - ε - ε/(V-1))·(-log p_y) + ε/(V-1)·Σ_v(-log p_v), i.e. the true class
    gets 1 - ε and every other class ε/(V-1). That is PyTorch's uniform smoothing with
    ε' = ε·V/(V-1), so one fused `F.cross_entropy` call computes it.
    logits [N, V], target [N].
    """
    vocab = logits.shape[-1]
    return F.cross_entropy(logits, target, ignore_index=ignore_index, label_smoothing=epsilon * vocab / (vocab - 1))


def _trim_padding(ids: Tensor, pad_id: int) -> Tensor:
    """Drop the trailing columns of [B, T] that are padding in every row."""
    used = (ids != pad_id).any(dim=0).nonzero()
    length = int(used[-1]) + 1 if len(used) else 1
    return ids[:, :length]


class Seq2SeqTask:
    """Translation with teacher forcing (fairseq-style, as in Michel et al. 2019).

    `*_tgt` rows are [BOS, y_1, ..., y_n, EOS, PAD, ...]: the decoder reads tgt[:, :-1]
    and predicts tgt[:, 1:]. The loss is label-smoothed cross-entropy (fairseq formula,
    see `label_smoothed_nll`) averaged over non-pad targets; it is the same in training
    and evaluation. Each batch is trimmed to its longest source and target, and padding
    masks (True = real token) are passed only when the batch has padding.
    """

    def __init__(
        self,
        train_src: Tensor,
        train_tgt: Tensor,
        eval_src: Tensor,
        eval_tgt: Tensor,
        *,
        pad_id: int,
        label_smoothing: float = 0.1,
        eval_batch_size: int = 64,
    ):
        named = {"train_src": train_src, "train_tgt": train_tgt, "eval_src": eval_src, "eval_tgt": eval_tgt}
        for name, t in named.items():
            _check_rows(name, t, 2)
        if len(train_src) != len(train_tgt) or len(eval_src) != len(eval_tgt):
            raise ValueError("source and target sets must have the same number of rows")
        if train_tgt.shape[1] < 2:
            raise ValueError("targets need at least 2 columns (BOS and one token)")
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing={label_smoothing!r} must be in [0, 1)")
        self.train_src, self.train_tgt = train_src, train_tgt
        self.eval_src, self.eval_tgt = eval_src, eval_tgt
        self.pad_id = pad_id
        self.label_smoothing = label_smoothing
        self.eval_batch_size = eval_batch_size
        self.sampler = EpochSampler(len(train_src))

    def _batch(self, src: Tensor, tgt: Tensor) -> dict[str, Tensor]:
        src = _trim_padding(src, self.pad_id)  # [B, S]
        tgt = _trim_padding(tgt, self.pad_id)  # [B, T+1]
        batch = {"src_ids": src, "tgt_ids": tgt[:, :-1], "labels": tgt[:, 1:]}
        src_real, tgt_real = padding_mask(src, self.pad_id), padding_mask(batch["tgt_ids"], self.pad_id)
        if not src_real.all():
            batch["src_padding_mask"] = src_real
        if not tgt_real.all():
            batch["tgt_padding_mask"] = tgt_real
        return batch

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        rows = self.sampler.indices(step, batch_size, seed)
        return self._batch(self.train_src[rows], self.train_tgt[rows])

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        for rows in _eval_slices(len(self.eval_src), self.eval_batch_size):
            yield self._batch(self.eval_src[rows], self.eval_tgt[rows])

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        logits = model(
            batch["src_ids"],
            batch["tgt_ids"],
            src_padding_mask=batch.get("src_padding_mask"),
            tgt_padding_mask=batch.get("tgt_padding_mask"),
        )  # [B, T, V]
        labels = batch["labels"]  # [B, T]
        loss = label_smoothed_nll(
            logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), self.label_smoothing, self.pad_id
        )
        n_tokens = batch["src_ids"].numel() + batch["tgt_ids"].numel()
        return LossOutput(loss, n_tokens, (labels != self.pad_id).sum())

    def fingerprint(self) -> dict:
        return task_fingerprint(
            self,
            "train_src",
            "train_tgt",
            "eval_src",
            "eval_tgt",
            pad_id=self.pad_id,
            label_smoothing=self.label_smoothing,
            eval_batch_size=self.eval_batch_size,
        )
