"""Each Task's batches and loss, against hand computations on tiny examples."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from repro.training import ClassificationTask, LanguageModelTask, MaskedLMTask, Seq2SeqTask, evaluate
from repro.training.tasks import IGNORE_INDEX, EpochSampler

V = 11


class TokenLogits(nn.Module):
    """logits[b, t] = table[input_ids[b, t]]: a fixed, position-wise model; records its inputs."""

    def __init__(self, vocab=V, seed=0):
        super().__init__()
        self.table = nn.Embedding(vocab, vocab)
        nn.init.normal_(self.table.weight, generator=torch.Generator().manual_seed(seed))
        self.calls = []

    def forward(self, input_ids, *, head_mask=None, padding_mask=None):
        self.calls.append({"input_ids": input_ids, "padding_mask": padding_mask})
        return self.table(input_ids)


def random_tokens(shape, seed=0, high=V):
    return torch.randint(high, shape, generator=torch.Generator().manual_seed(seed))


# -- sampling -------------------------------------------------------------------------------


def test_epochs_are_seeded_permutations_and_steps_are_pure():
    sampler = EpochSampler(10)
    epoch0 = torch.cat([sampler.indices(s, 3, seed=7) for s in range(3)])  # 3 batches of 3 per epoch
    assert len(set(epoch0.tolist())) == 9  # no example twice within an epoch
    epoch1 = torch.cat([sampler.indices(s, 3, seed=7) for s in range(3, 6)])
    assert not torch.equal(epoch0, epoch1)  # a new permutation each epoch
    assert torch.equal(EpochSampler(10).indices(4, 3, seed=7), sampler.indices(4, 3, seed=7))  # no hidden state
    assert not torch.equal(EpochSampler(10).indices(0, 3, seed=8), sampler.indices(0, 3, seed=7))
    assert sampler.epoch(5, 3) == 1 and sampler.steps_per_epoch(3) == 3


# -- language model -------------------------------------------------------------------------


def test_lm_loss_is_cross_entropy_on_shifted_logits():
    tokens = random_tokens((6, 5))
    task = LanguageModelTask(tokens, tokens[:2])
    model = TokenLogits()
    batch = task.train_batch(0, 4, seed=0)
    out = task.loss(model, batch)
    x = batch["input_ids"]
    logits = model.table(x)  # [4, 5, V]
    expected = F.cross_entropy(logits[:, :-1].reshape(-1, V), x[:, 1:].reshape(-1))
    torch.testing.assert_close(out.loss, expected)
    assert out.n_tokens == 4 * 5 and out.n_targets == 4 * 4
    assert torch.equal(model.calls[0]["input_ids"], x)  # the model reads the whole chunk


def test_lm_batches_depend_only_on_seed_and_step():
    tokens = random_tokens((20, 4))
    a, b = LanguageModelTask(tokens, tokens), LanguageModelTask(tokens, tokens)
    b.train_batch(9, 4, seed=3)  # a different history must not matter
    assert torch.equal(a.train_batch(2, 4, seed=3)["input_ids"], b.train_batch(2, 4, seed=3)["input_ids"])


# -- masked language model ------------------------------------------------------------------


def test_mlm_loss_counts_only_masked_positions():
    tokens = random_tokens((4, 8), high=V - 1)
    task = MaskedLMTask(tokens, tokens, mask_token_id=V - 1, vocab_size=V, mask_prob=0.3)
    model = TokenLogits()
    batch = task.train_batch(0, 4, seed=0)
    out = task.loss(model, batch)
    selected = batch["labels"] != IGNORE_INDEX
    logits = model.table(batch["input_ids"])
    expected = F.cross_entropy(logits[selected], batch["labels"][selected])
    torch.testing.assert_close(out.loss, expected)
    assert int(out.n_targets) == int(selected.sum()) > 0
    assert torch.equal(batch["labels"][selected], tokens[task.sampler.indices(0, 4, 0)][selected])


def test_mlm_masking_follows_80_10_10_and_spares_special_ids():
    tokens = random_tokens((200, 100), seed=1, high=V - 1)  # ids 0..9; V-1 = 10 is [MASK]
    task = MaskedLMTask(tokens[:1], tokens[:1], mask_token_id=V - 1, vocab_size=V, mask_prob=0.25, special_ids=[0])
    inputs, labels = task.mask(tokens, torch.Generator().manual_seed(0))
    selected = labels != IGNORE_INDEX
    assert not selected[tokens == 0].any()  # special ids never selected
    eligible = int((tokens != 0).sum())
    assert abs(int(selected.sum()) / eligible - 0.25) < 0.01
    assert torch.equal(inputs[~selected], tokens[~selected])  # unselected positions untouched
    n = int(selected.sum())
    to_mask = int((inputs[selected] == V - 1).sum()) / n
    kept = int((inputs[selected] == tokens[selected]).sum()) / n
    # Kept = the 10% left unchanged + random draws that hit the original id (0.1 / V).
    assert abs(to_mask - 0.8) < 0.02 and abs(kept - (0.1 + 0.1 / V)) < 0.015


def test_mlm_eval_masks_are_fixed_and_train_masks_vary_by_step():
    tokens = random_tokens((8, 6), high=V - 1)
    task = MaskedLMTask(tokens, tokens, mask_token_id=V - 1, vocab_size=V, mask_prob=0.3, eval_batch_size=3)
    first, second = list(task.eval_batches()), list(task.eval_batches())
    assert [len(b["labels"]) for b in first] == [3, 3, 2]
    assert all(torch.equal(a["input_ids"], b["input_ids"]) for a, b in zip(first, second))
    assert not torch.equal(task.train_batch(0, 8, 0)["labels"], task.train_batch(1, 8, 0)["labels"])


def test_evaluate_averages_over_all_targets_not_batches():
    tokens = random_tokens((7, 6), high=V - 1)
    task = MaskedLMTask(tokens, tokens, mask_token_id=V - 1, vocab_size=V, mask_prob=0.3, eval_batch_size=3)
    model = TokenLogits()
    inputs = torch.cat([b["input_ids"] for b in task.eval_batches()])
    labels = torch.cat([b["labels"] for b in task.eval_batches()])
    selected = labels != IGNORE_INDEX
    expected = F.cross_entropy(model.table(inputs)[selected].double(), labels[selected]).detach()
    assert abs(evaluate(model, task) - expected.item()) < 1e-6
    assert model.training  # mode restored


# -- classification -------------------------------------------------------------------------


class MeanPoolClassifier(nn.Module):
    def __init__(self, n_out):
        super().__init__()
        self.embed = nn.Embedding(V, n_out)
        self.seen_masks = []

    def forward(self, input_ids, *, head_mask=None, padding_mask=None):
        self.seen_masks.append(padding_mask)
        return self.embed(input_ids).mean(dim=1)  # [B, n_out]


def test_classification_cross_entropy_and_padding_mask_passthrough():
    inputs = random_tokens((6, 4))
    labels = torch.tensor([0, 1, 2, 0, 1, 2])
    mask = torch.ones(6, 4, dtype=torch.bool)
    mask[:, 3] = False  # True = real token
    task = ClassificationTask(inputs, labels, inputs, labels, train_padding_mask=mask, eval_padding_mask=mask)
    model = MeanPoolClassifier(3)
    batch = task.train_batch(0, 6, seed=0)
    out = task.loss(model, batch)
    torch.testing.assert_close(out.loss, F.cross_entropy(model.embed(batch["input_ids"]).mean(1), batch["labels"]))
    assert torch.equal(model.seen_masks[0], mask)
    assert out.n_tokens == 24 and out.n_targets == 6


def test_regression_labels_use_mean_squared_error():
    inputs = random_tokens((5, 3))
    targets = torch.linspace(0, 5, 5)
    task = ClassificationTask(inputs, targets, inputs, targets)
    model = MeanPoolClassifier(1)
    batch = task.train_batch(0, 5, seed=0)
    expected = ((model.embed(batch["input_ids"]).mean(1).squeeze(1) - batch["labels"]) ** 2).mean()
    torch.testing.assert_close(task.loss(model, batch).loss, expected)
    assert model.seen_masks == [None]


# -- sequence to sequence -------------------------------------------------------------------

PAD, BOS, EOS = 0, 1, 2


class ToySeq2Seq(nn.Module):
    """logits[b, t] = table[tgt[b, t]] + the mean of the non-pad source embeddings of row b."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(V, V)
        self.calls = []

    def forward(self, src_ids, tgt_ids, *, head_mask=None, src_padding_mask=None, tgt_padding_mask=None):
        self.calls.append((src_ids, tgt_ids, src_padding_mask, tgt_padding_mask))
        keep = (
            src_padding_mask if src_padding_mask is not None else torch.ones_like(src_ids, dtype=torch.bool)
        ).float()
        context = (self.table(src_ids) * keep[..., None]).sum(1) / keep.sum(1, keepdim=True)
        return self.table(tgt_ids) + context[:, None, :]


def fairseq_label_smoothed(logits, target, eps, pad):
    """fairseq label_smoothed_nll_loss, written out: mean over non-pad targets."""
    lprobs = logits.log_softmax(-1)
    nll = -lprobs.gather(-1, target[:, None]).squeeze(1)
    smooth = -lprobs.sum(-1)
    eps_i = eps / (logits.shape[-1] - 1)
    per_target = (1.0 - eps - eps_i) * nll + eps_i * smooth
    keep = target != pad
    return per_target[keep].mean()


def test_seq2seq_teacher_forcing_label_smoothing_and_padding():
    src = torch.tensor([[5, 6, 7, PAD, PAD], [8, 9, PAD, PAD, PAD]])
    tgt = torch.tensor([[BOS, 3, 4, 6, EOS, PAD], [BOS, 5, EOS, PAD, PAD, PAD]])
    task = Seq2SeqTask(src, tgt, src, tgt, pad_id=PAD, label_smoothing=0.1)
    model = ToySeq2Seq()
    batch = task.train_batch(0, 2, seed=0)
    out = task.loss(model, batch)
    src_seen, tgt_seen, src_mask, tgt_mask = model.calls[0]
    assert src_seen.shape == (2, 3) and tgt_seen.shape == (2, 4)  # trimmed to the longest row
    assert torch.equal(src_mask, src_seen != PAD) and torch.equal(tgt_mask, tgt_seen != PAD)  # True = real
    labels = batch["labels"]
    assert torch.equal(torch.cat([tgt_seen[:, :1], labels], 1), tgt[task.sampler.indices(0, 2, 0)][:, :5])
    logits = model(src_seen, tgt_seen, src_padding_mask=src_mask, tgt_padding_mask=tgt_mask)
    expected = fairseq_label_smoothed(logits.reshape(-1, V), labels.reshape(-1), 0.1, PAD)
    torch.testing.assert_close(out.loss, expected)
    assert int(out.n_targets) == 4 + 2 and out.n_tokens == 2 * 3 + 2 * 4


def test_seq2seq_loss_ignores_logits_at_pad_targets():
    src = torch.tensor([[5, 6, PAD], [8, 9, 4]])
    tgt = torch.tensor([[BOS, 3, EOS, PAD], [BOS, 5, 6, EOS]])
    task = Seq2SeqTask(src, tgt, src, tgt, pad_id=PAD, label_smoothing=0.0)
    batch = next(iter(task.eval_batches()))
    base = ToySeq2Seq()
    loss = task.loss(base, batch).loss

    class PadNoise(ToySeq2Seq):
        def forward(self, src_ids, tgt_ids, **kw):
            logits = base(src_ids, tgt_ids, **kw)
            return logits + 100.0 * torch.randn_like(logits) * (batch["labels"] == PAD)[..., None]

    torch.testing.assert_close(task.loss(PadNoise(), batch).loss, loss)
    # With no smoothing it is plain NLL over the 5 real targets.
    logits = base(batch["src_ids"], batch["tgt_ids"], src_padding_mask=batch.get("src_padding_mask"))
    keep = batch["labels"] != PAD
    torch.testing.assert_close(loss, F.cross_entropy(logits[keep], batch["labels"][keep]))
    assert int(keep.sum()) == 5
