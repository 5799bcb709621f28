"""Head importance (Michel et al. 2019, §4.1): the mask gradient equals the official code's formula.

The official code retains the gradient of each head's context ctx [B,H,T,dh] and accumulates
Σ_{b,t} |Σ_i ctx[b,h,t,i]·grad[b,h,t,i]| over real tokens. Our importance comes from one backward
pass through a per-token head mask of ones. In float64 the two must agree to rounding.
"""

import pytest
import torch

from repro.analysis import heads as H
from repro.analysis.head_importance import (
    classification_loss_sum,
    head_importance,
    language_model_loss_sum,
    normalize_by_layer,
    translation_loss_sum,
)
from repro.models import EncoderDecoder, Transformer, TransformerConfig
from repro.training.tasks import IGNORE_INDEX


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models: one thread avoids oversubscribing a shared 2-core machine (restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _perturb(model, scale=0.3):
    for p in model.parameters():
        p.data.add_(scale * torch.randn_like(p))
    return model


def small_classifier(seed=0, dropout=0.0):
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
        dropout=dropout,
        attn_dropout=dropout,
    )
    torch.manual_seed(seed)
    return _perturb(Transformer(cfg).double().eval())


def small_translator(seed=0):
    kw = dict(vocab_size=20, n_layers=2, d_model=24, n_heads=4, d_ff=32, max_seq_len=16, position="sinusoidal")
    torch.manual_seed(seed)
    enc = TransformerConfig(**kw, causal=False, output="none")
    dec = TransformerConfig(**kw, cross_attention=True)
    return _perturb(EncoderDecoder(enc, dec).double().eval())


def classifier_batches():
    gen = torch.Generator().manual_seed(1)
    out = []
    for _ in range(2):
        ids = torch.randint(3, 20, (5, 12), generator=gen)
        ids[:, 6] = 2  # SEP
        ids[1, 9:] = 0  # padding
        ids[3, 10:] = 0
        out.append({"input_ids": ids, "labels": torch.randint(0, 3, (5,), generator=gen), "padding_mask": ids != 0})
    return out


def translator_batches():
    gen = torch.Generator().manual_seed(2)
    src = torch.randint(3, 20, (4, 9), generator=gen)
    src[2, 6:] = 0
    tgt = torch.randint(3, 20, (4, 8), generator=gen)
    tgt[:, 0] = 1
    tgt[1, 5:] = 0
    batch = {
        "src_ids": src,
        "tgt_ids": tgt[:, :-1],
        "labels": tgt[:, 1:],
        "src_padding_mask": src != 0,
        "tgt_padding_mask": tgt[:, :-1] != 0,
    }
    return [batch]


def official_formula(model, batches, loss_fn, real_of):
    """Σ_{b,t real} |ctx·grad| from retained context gradients (the official code's computation)."""
    full = H.full_masks(model, torch.float64)
    total = {k: torch.zeros(v.shape, dtype=torch.float64) for k, v in full.items()}
    for batch in batches:
        contexts = {}

        def keep(z, name):
            z.retain_grad()
            contexts[name] = z

        names = {H.hook_name(kind, layer): keep for kind, mask in full.items() for layer in range(mask.shape[0])}
        with model.hooks(names):
            loss = loss_fn(model, batch, None)
        loss.backward()
        for kind, mask in full.items():
            real = real_of(batch, kind)  # [B,T]
            for layer in range(mask.shape[0]):
                z = contexts[H.hook_name(kind, layer)]
                dot = (z * z.grad).sum(-1)  # [B,H,T]
                total[kind][layer] += (dot.abs() * real[:, None, :]).sum(dim=(0, 2))
        model.zero_grad()
    return total


def test_classifier_importance_is_abs_context_dot_gradient_per_token():
    model = small_classifier()
    batches = classifier_batches()
    raw, tokens = head_importance(model, batches, classification_loss_sum, dtype=torch.float64)
    expected = official_formula(model, batches, classification_loss_sum, lambda b, k: b["padding_mask"].double())
    torch.testing.assert_close(raw["self"], expected["self"], rtol=1e-10, atol=1e-12)
    assert tokens["self"] == sum(int(b["padding_mask"].sum()) for b in batches)
    assert (raw["self"] > 0).all()


def test_translator_importance_per_attention_type():
    model = small_translator()
    batches = translator_batches()
    loss_fn = translation_loss_sum(0.1, pad_id=0)
    raw, _ = head_importance(model, batches, loss_fn, dtype=torch.float64)

    def real_of(batch, kind):
        return (batch["src_padding_mask"] if kind == "enc_self" else batch["tgt_padding_mask"]).double()

    expected = official_formula(model, batches, loss_fn, real_of)
    for kind in ("enc_self", "cross", "dec_self"):
        torch.testing.assert_close(raw[kind], expected[kind], rtol=1e-10, atol=1e-12)


def test_per_token_absolute_value_differs_from_per_sentence():
    """The code takes |·| per token; summing the dot product over tokens first gives less."""
    model = small_classifier()
    batch = classifier_batches()[0]
    mask = torch.ones(3, 5, 4, batch["input_ids"].shape[1], dtype=torch.float64, requires_grad=True)
    loss = classification_loss_sum(model, batch, mask)
    (grad,) = torch.autograd.grad(loss, [mask])
    per_token = (grad.abs() * batch["padding_mask"][None, :, None, :]).sum(dim=(1, 3))
    raw, _ = head_importance(model, [batch], classification_loss_sum, dtype=torch.float64)
    torch.testing.assert_close(raw["self"], per_token, rtol=1e-12, atol=0)
    per_sentence = (grad * batch["padding_mask"][None, :, None, :]).sum(dim=3).abs().sum(dim=1)
    assert (per_sentence <= per_token + 1e-12).all() and (per_sentence < per_token - 1e-9).any()


def test_importance_does_not_depend_on_batching():
    model = small_classifier()
    batches = classifier_batches()
    joined = {k: torch.cat([b[k] for b in batches]) for k in batches[0]}
    split, _ = head_importance(model, batches, classification_loss_sum, dtype=torch.float64)
    whole, _ = head_importance(model, [joined], classification_loss_sum, dtype=torch.float64)
    torch.testing.assert_close(split["self"], whole["self"], rtol=1e-10, atol=1e-12)


def test_importance_runs_in_eval_mode_and_restores_the_mode():
    """With dropout 0.5 a forward in train mode would differ; importance must not see it."""
    model = small_classifier(dropout=0.5).train()
    raw_train_mode, _ = head_importance(model, classifier_batches(), classification_loss_sum, dtype=torch.float64)
    assert model.training
    raw_eval, _ = head_importance(model.eval(), classifier_batches(), classification_loss_sum, dtype=torch.float64)
    # exact: the same eval-mode computation twice on one machine
    torch.testing.assert_close(raw_train_mode["self"], raw_eval["self"], rtol=0, atol=0)


def test_layer_normalisation_by_hand():
    raw = {"self": torch.tensor([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, float("nan"), 1.0]], dtype=torch.float64)}
    out = normalize_by_layer(raw)["self"]
    torch.testing.assert_close(out[0], torch.tensor([0.6, 0.8, 0.0], dtype=torch.float64))
    assert (out[1] == 0).all()  # exact: an all-zero row is kept as it is (no NaN)
    # float64 norm and division: a few ulps between CPUs
    torch.testing.assert_close(out[2, [0, 2]], torch.full((2,), 1 / 2**0.5, dtype=torch.float64), rtol=1e-12, atol=0)
    assert torch.isnan(out[2, 1])


# Decoder LMs of every block kind (the shared importance, as the cross-paper studies read simplified_blocks'
# decoders): skipless blocks carry each head's slice of the stream through shaped attention.
def small_decoder(block: str, seed: int = 0) -> Transformer:
    cfg = TransformerConfig(vocab_size=20, n_layers=2, d_model=24, n_heads=4, d_ff=32, max_seq_len=12, block=block)
    torch.manual_seed(seed)
    return _perturb(Transformer(cfg).double().eval(), scale=0.1)


def lm_batches():
    gen = torch.Generator().manual_seed(3)
    ids = torch.randint(0, 20, (4, 10), generator=gen)
    labels = torch.cat([ids[:, 1:], torch.full((4, 1), IGNORE_INDEX)], dim=1)
    return [{"input_ids": ids, "labels": labels}]


@pytest.mark.parametrize("block", ["pre_ln", "parallel", "sas", "sas_p"])
def test_decoder_importance_is_abs_context_dot_gradient_for_every_block(block):
    model = small_decoder(block)
    raw, tokens = head_importance(model, lm_batches(), language_model_loss_sum, dtype=torch.float64)
    expected = official_formula(
        model, lm_batches(), language_model_loss_sum, lambda b, k: torch.ones_like(b["input_ids"], dtype=torch.float64)
    )
    torch.testing.assert_close(raw[H.SELF], expected[H.SELF], rtol=1e-9, atol=1e-12)
    assert tokens[H.SELF] == 40 and (raw[H.SELF] > 0).all()  # 4 chunks of 10 tokens; every head matters a little
    # masking a head changes the loss: the mask reaches shaped attention too
    batch = lm_batches()[0]
    whole = language_model_loss_sum(model, batch, None)
    masked = language_model_loss_sum(model, batch, H.model_mask(model, H.masks_without(model, [(H.SELF, 0, 1)])))
    assert not torch.isclose(whole, masked)
