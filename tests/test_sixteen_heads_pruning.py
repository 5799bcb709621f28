"""Masked and physically pruned models agree; the evaluators' shortcuts change nothing.

- Physical pruning (`prune_heads`) of the heads a mask removes gives the masked model's scores to
  1e-5 (catalog Table 4 check; float32, as the analyses run), classifier and translator.
- The classifier evaluator starts a masked forward at the first changed layer from cached
  residuals; the translation evaluator reuses the encoder output and decodes with a key/value
  cache. Both must equal a plain forward / `greedy_decode` (float64).
"""

import numpy as np
import pytest
import torch

from repro.analysis import heads as H
from repro.analysis.decoding import cached_greedy_decode
from repro.models import EncoderDecoder, Transformer, TransformerConfig, prune_heads
from repro.papers.sixteen_heads.head_eval import ClassifierEvaluator, TranslationEvaluator


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models: one thread avoids oversubscribing a shared 2-core machine (restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def classifier(dtype=torch.float64, seed=0):
    cfg = TransformerConfig(
        vocab_size=20,
        n_layers=3,
        d_model=24,
        n_heads=4,
        d_ff=32,
        max_seq_len=16,
        block="post_ln",
        causal=False,
        output="classifier",
        n_classes=3,
        n_token_types=2,
        type_sep_id=2,
        vo_bias=True,
    )
    torch.manual_seed(seed)
    model = Transformer(cfg).to(dtype).eval()
    for p in model.parameters():
        p.data.add_(0.3 * torch.randn_like(p))
    return model


def classifier_set(n=40, seed=1):
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 20, (n, 12), generator=gen)
    ids[:, 6] = 2
    ids[::3, 9:] = 0
    return ids, torch.randint(0, 3, (n,), generator=gen)


def translator(block="pre_ln", position="sinusoidal", dtype=torch.float64, seed=0):
    kw = dict(
        vocab_size=20,
        n_layers=2,
        d_model=24,
        n_heads=4,
        d_ff=32,
        max_seq_len=24,
        block=block,
        position=position,
        vo_bias=True,
    )
    torch.manual_seed(seed)
    model = (
        EncoderDecoder(
            TransformerConfig(**kw, causal=False, output="none"), TransformerConfig(**kw, cross_attention=True)
        )
        .to(dtype)
        .eval()
    )
    for p in model.parameters():
        p.data.add_(0.3 * torch.randn_like(p))
    return model


def translation_set(n=12, seed=3):
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(3, 20, (n, 9), generator=gen)
    src[::4, 6:] = 0
    tgt = torch.randint(3, 20, (n, 10), generator=gen)
    tgt[:, 0], tgt[:, -1] = 1, 2
    return src, tgt


MASK_CASES = [
    [("self", 1, 2)],
    [("self", 0, 0), ("self", 0, 3), ("self", 2, 1)],
    [("self", 1, h) for h in range(4)],  # an emptied layer
]


@pytest.mark.parametrize("heads", MASK_CASES)
def test_classifier_evaluator_matches_the_masked_forward(heads):
    model = classifier()
    ids, labels = classifier_set()
    evaluator = ClassifierEvaluator(model, {"test": (ids, labels)}, batch_size=16)
    masks = H.masks_without(model, heads, torch.float64)
    expected = model(ids, padding_mask=ids != 0, head_mask=masks["self"])
    torch.testing.assert_close(evaluator.logits(masks, "test"), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(evaluator.logits(None, "test"), model(ids, padding_mask=ids != 0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("heads", MASK_CASES)
def test_physically_pruned_classifier_scores_like_the_masked_one(heads):
    model = classifier(torch.float32)
    ids, labels = classifier_set(n=200)
    masks = H.masks_without(model, heads)
    masked = ClassifierEvaluator(model, {"test": (ids, labels)}).evaluate(masks, "test")
    masked_logits = model(ids, padding_mask=ids != 0, head_mask=masks["self"])
    prune_heads(model, H.pruned_heads(masks)["self"])
    pruned = ClassifierEvaluator(model, {"test": (ids, labels)}).evaluate(None, "test")
    torch.testing.assert_close(model(ids, padding_mask=ids != 0), masked_logits, rtol=0, atol=1e-5)
    assert abs(pruned.score - masked.score) <= 1e-5
    assert np.array_equal(pruned.stats, masked.stats)


@pytest.mark.parametrize("block", ["pre_ln", "post_ln"])
@pytest.mark.parametrize("position", ["sinusoidal", "learned"])
def test_cached_decoding_equals_greedy_decode(block, position):
    model = translator(block, position)
    src, _ = translation_set()
    masks = H.masks_without(
        model, [("enc_self", 0, 1), ("dec_self", 1, 2), ("cross", 0, 0), ("cross", 0, 3)], torch.float64
    )
    arg = H.model_mask(model, masks)
    pad = src != 0
    expected = model.greedy_decode(src, 1, 2, max_len=20, src_padding_mask=pad, head_mask=arg)
    assert torch.equal(
        cached_greedy_decode(model, src, 1, 2, max_len=20, src_padding_mask=pad, head_mask=arg), expected
    )
    memory = model.encode(src, pad, arg)
    assert torch.equal(cached_greedy_decode(model, src, 1, 2, 20, pad, arg, memory=memory), expected)


def test_cached_decoding_drops_ended_sentences_and_still_equals_greedy_decode():
    """Every token id taken as EOS in turn: sentences end at different steps, and those that ended
    leave the batch once they are a quarter of it."""
    model = translator("pre_ln", "learned")
    src, _ = translation_set(n=16)
    pad = src != 0
    compacted = 0
    for eos in range(3, 20):
        expected = model.greedy_decode(src, 1, eos, max_len=20, src_padding_mask=pad)
        assert torch.equal(cached_greedy_decode(model, src, 1, eos, max_len=20, src_padding_mask=pad), expected)
        ended_at = torch.where((expected == eos).any(1), (expected == eos).int().argmax(1), expected.shape[1])
        compacted += int(4 * int((ended_at < expected.shape[1] - 1).sum()) >= len(src))
    assert compacted >= 3  # the batch did shrink in several of the cases


def test_cached_decoding_refuses_unsupported_decoders():
    model = translator(position="rope")
    with pytest.raises(NotImplementedError, match="rope"):
        cached_greedy_decode(model, translation_set()[0], 1, 2, 10)


def test_translation_evaluator_reuses_the_encoder_only_when_enc_self_is_whole():
    model = translator()
    src, tgt = translation_set()
    evaluator = TranslationEvaluator(model, {"test": (src, tgt)}, bos_id=1, eos_id=2, extra_tokens=4)
    for heads in ([("dec_self", 0, 1)], [("enc_self", 1, 3)], [("cross", 1, h) for h in range(4)]):
        masks = H.masks_without(model, heads, torch.float64)
        out = model.greedy_decode(
            src, 1, 2, evaluator.max_len("test"), src_padding_mask=src != 0, head_mask=H.model_mask(model, masks)
        )
        # Cut at EOS; BOS and PAD ids are not words.
        words = [" ".join(str(t) for t in row[: (row + [2]).index(2)] if t not in (0, 1)) for row in out.tolist()]
        assert evaluator.decode(masks, "test") == words


def test_evaluators_loss_is_the_gold_cross_entropy_under_masks():
    model = classifier()
    ids, labels = classifier_set()
    evaluator = ClassifierEvaluator(model, {"test": (ids, labels)})
    masks = H.masks_without(model, [("self", 1, 2)], torch.float64)
    logits = model(ids, padding_mask=ids != 0, head_mask=masks["self"])
    expected = torch.nn.functional.cross_entropy(logits, labels).item()
    assert evaluator.evaluate(masks, "test").loss == pytest.approx(expected, rel=1e-12)

    model = translator()
    src, tgt = translation_set()
    evaluator = TranslationEvaluator(model, {"test": (src, tgt)}, bos_id=1, eos_id=2, batch_size=5)
    for heads in ([("dec_self", 0, 1)], [("enc_self", 1, 3), ("cross", 0, 0)]):
        masks = H.masks_without(model, heads, torch.float64)
        logits = model(
            src,
            tgt[:, :-1],
            head_mask=H.model_mask(model, masks),
            src_padding_mask=src != 0,
            tgt_padding_mask=tgt[:, :-1] != 0,
        )
        expected = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=0)
        assert evaluator.loss(masks, "test") == pytest.approx(expected.item(), rel=1e-12)
    assert evaluator.evaluate(None, "test").loss == pytest.approx(evaluator.loss(None, "test"))


def _stacked_rows(model, masks_list, n):
    """{type: [layers, k·n, heads, 1]}: n sentences under each mask in turn."""
    return {
        kind: torch.stack([masks[kind] for masks in masks_list], 1).repeat_interleave(n, 1).unsqueeze(-1)
        for kind in H.attention_types(model)
    }


def test_cached_decoding_takes_one_mask_row_per_sentence():
    model = translator()
    src, _ = translation_set()
    pad = src != 0
    masks_list = [
        H.masks_without(model, heads, torch.float64)
        for heads in ([("dec_self", 0, 1)], [("cross", 1, h) for h in range(4)], [("enc_self", 0, 2), ("cross", 0, 0)])
    ]
    rows = _stacked_rows(model, masks_list, len(src))
    k = len(masks_list)
    for eos in range(3, 20):  # several EOS ids, so that finished sentences leave the batch with their mask rows
        out = cached_greedy_decode(model, src.repeat(k, 1), 1, eos, 20, pad.repeat(k, 1), head_mask=rows)
        for i, masks in enumerate(masks_list):
            expected = model.greedy_decode(src, 1, eos, 20, pad, head_mask=H.model_mask(model, masks))
            got = out[i * len(src) : (i + 1) * len(src)]
            width = max(got.shape[1], expected.shape[1])
            pad_to = lambda t: torch.nn.functional.pad(t, (0, width - t.shape[1]), value=eos)  # noqa: E731
            assert torch.equal(pad_to(got), pad_to(expected)), (eos, i)


def test_translation_evaluator_sweeps_give_each_masks_own_evaluation():
    model = translator()
    src, tgt = translation_set()
    # 5 sentences a batch and 10 rows a group: 2 masks a group, over 3 batches of the set.
    evaluator = TranslationEvaluator(
        model, {"test": (src, tgt)}, bos_id=1, eos_id=2, extra_tokens=4, batch_size=5, sweep_batch_rows=10
    )
    masks_list = [None] + [
        H.masks_without(model, heads, torch.float64)
        for heads in (
            [("dec_self", 0, 1)],
            [("enc_self", 1, 3)],
            [("cross", 1, h) for h in range(4)],
            [("enc_self", 0, 0), ("cross", 0, 2)],
            [("dec_self", 1, 2)],
        )
    ]
    swept = evaluator.evaluate_many(masks_list, "test")
    for masks, result in zip(masks_list, swept):
        alone = evaluator.evaluate(masks, "test")
        out = model.greedy_decode(
            src, 1, 2, evaluator.max_len("test"), src_padding_mask=src != 0, head_mask=H.model_mask(model, masks)
        )
        words = [" ".join(str(t) for t in row[: (row + [2]).index(2)] if t not in (0, 1)) for row in out.tolist()]
        assert evaluator.decode(masks, "test") == words
        assert np.array_equal(result.stats, alone.stats)
        assert result.score == alone.score
        assert result.loss == pytest.approx(alone.loss, rel=1e-12)


@pytest.mark.parametrize(
    "heads",
    [
        [("enc_self", 0, 2)],
        [("dec_self", 1, 0), ("cross", 0, 1), ("cross", 0, 2)],
        [("cross", 1, h) for h in range(4)] + [("enc_self", 1, 0)],
    ],
)
def test_physically_pruned_translator_scores_like_the_masked_one(heads):
    model = translator(dtype=torch.float32)
    src, tgt = translation_set(n=30)
    masks = H.masks_without(model, heads)
    masked = TranslationEvaluator(model, {"test": (src, tgt)}, bos_id=1, eos_id=2).evaluate(masks, "test")
    prune_heads(model, H.pruned_heads(masks))
    pruned = TranslationEvaluator(model, {"test": (src, tgt)}, bos_id=1, eos_id=2).evaluate(None, "test")
    assert abs(pruned.score - masked.score) <= 1e-5
    assert np.array_equal(pruned.stats, masked.stats)


def test_the_oracle_order_removes_the_least_harmful_head_first_and_names_what_is_missing():
    import pandas as pd

    from repro.papers.sixteen_heads.tables import oracle_order

    heads = [("enc_self", 0, 0), ("enc_self", 0, 1), ("enc_self", 1, 0)]
    rows = [
        dict(experiment="single", set="test", type="enc_self", layer=0, head=0, delta=-2.0, delta_loss=0.3),
        dict(experiment="single", set="test", type="enc_self", layer=0, head=1, delta=0.0, delta_loss=0.2),
        dict(experiment="single", set="test", type="enc_self", layer=1, head=0, delta=0.0, delta_loss=0.1),
        dict(experiment="single", set="shifted", type="enc_self", layer=1, head=0, delta=-9.0, delta_loss=9.0),
    ]
    ablation = pd.DataFrame(rows)
    # Δ 0 before Δ −2; of the two Δ 0 heads the one that raises the loss less goes first.
    assert oracle_order(ablation, heads) == [("enc_self", 1, 0), ("enc_self", 0, 1), ("enc_self", 0, 0)]
    with pytest.raises(ValueError, match="rerun its ablate step"):
        oracle_order(ablation.drop(columns="delta_loss"), heads)
    with pytest.raises(ValueError, match="lacks the single-head test Δ of 1 heads"):
        oracle_order(ablation.iloc[1:], heads)
