"""Head masks, physical pruning, hook points and causality (Michel et al. 2019, §2 and §4)."""

import pytest
import torch

from repro.models import EncoderDecoder, TransformerConfig, build_model, heads_from_mask, prune_heads


def make(seed=0, **kw):
    base = dict(vocab_size=40, n_layers=3, d_model=32, n_heads=4, d_ff=48, max_seq_len=20)
    base.update(kw)
    torch.manual_seed(seed)
    return build_model(base).double().eval()


def tokens(B=3, T=20, V=40, seed=1):
    return torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(seed))


def random_mask(layers, heads, seed=2):
    mask = (torch.rand(layers, heads, generator=torch.Generator().manual_seed(seed)) > 0.5).double()
    mask[1] = 0.0  # one layer loses every head
    mask[0, 0] = 1.0
    return mask


@pytest.mark.parametrize("block", ["pre_ln", "post_ln", "parallel", "vskipinit", "vskipinit_code"])
@pytest.mark.parametrize("position", ["learned", "alibi", "rope"])
def test_masked_equals_pruned(block, position):
    model = make(block=block, position=position)
    mask = random_mask(3, 4)
    x = tokens()
    masked = model(x, head_mask=mask)
    prune_heads(model, heads_from_mask(mask))
    assert [blk.attn.n_heads for blk in model.blocks] == [int(r.sum()) for r in mask]
    torch.testing.assert_close(model(x), masked, rtol=0, atol=1e-12)


def test_pruning_in_two_steps_uses_original_ids():
    model = make()
    x = tokens()
    mask = torch.ones(3, 4, dtype=torch.float64)
    mask[0, 1] = mask[0, 3] = mask[2, 0] = 0
    expected = model(x, head_mask=mask)
    prune_heads(model, {0: [1]})
    prune_heads(model, {0: [3, 1], 2: [0]})  # 1 again: already gone, ignored
    assert model.blocks[0].attn.head_ids.tolist() == [0, 2]
    torch.testing.assert_close(model(x), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(model(x, head_mask=mask), expected, rtol=0, atol=1e-12)


def test_classifier_masked_equals_pruned_with_padding():
    model = make(output="classifier", n_classes=3, causal=False, block="post_ln", pool="first")
    x = tokens()
    pad = torch.ones_like(x, dtype=torch.bool)
    pad[0, 12:] = False
    mask = random_mask(3, 4, seed=5)
    masked = model(x, head_mask=mask, padding_mask=pad)
    assert masked.shape == (3, 3)
    prune_heads(model, heads_from_mask(mask))
    torch.testing.assert_close(model(x, padding_mask=pad), masked, rtol=0, atol=1e-12)


def make_encdec(seed=0):
    enc = TransformerConfig(
        vocab_size=40, n_layers=2, d_model=32, n_heads=4, d_ff=48, max_seq_len=20, causal=False, output="none"
    )
    dec = TransformerConfig(
        vocab_size=40, n_layers=2, d_model=32, n_heads=4, d_ff=48, max_seq_len=20, cross_attention=True
    )
    torch.manual_seed(seed)
    return EncoderDecoder(enc, dec).double().eval()


def test_encoder_decoder_masked_equals_pruned_per_attention_type():
    model = make_encdec()
    src, tgt = tokens(T=14), tokens(T=11, seed=3)
    src_pad = torch.ones_like(src, dtype=torch.bool)
    src_pad[1, 9:] = False
    masks = {kind: random_mask(2, 4, seed=i)[[0, 1]] for i, kind in enumerate(("enc_self", "dec_self", "cross"))}
    masks["cross"][1] = 0.0
    masked = model(src, tgt, head_mask=masks, src_padding_mask=src_pad)
    decoded = model.greedy_decode(src, bos_id=1, eos_id=2, max_len=8, src_padding_mask=src_pad, head_mask=masks)
    prune_heads(model, {kind: heads_from_mask(m) for kind, m in masks.items()})
    torch.testing.assert_close(model(src, tgt, src_padding_mask=src_pad), masked, rtol=0, atol=1e-12)
    assert torch.equal(model.greedy_decode(src, bos_id=1, eos_id=2, max_len=8, src_padding_mask=src_pad), decoded)


def test_layer_with_all_heads_masked_passes_its_residual_through():
    for vo_bias in (False, True):
        model = make(vo_bias=vo_bias)
        mask = torch.ones(3, 4, dtype=torch.float64)
        mask[1] = 0
        _, cache = model.run_with_cache(tokens(), head_mask=mask)
        pre, mid = cache["blocks.1.hook_resid_pre"], cache["blocks.1.hook_resid_mid"]
        b_o = model.blocks[1].attn.proj.bias if vo_bias else 0.0
        torch.testing.assert_close(mid, pre + b_o, rtol=0, atol=1e-12)  # only W^O's shared bias remains


@pytest.mark.parametrize("block", ["pre_ln", "parallel", "sas", "sas_p", "vskipinit"])
@pytest.mark.parametrize("position", ["learned", "sinusoidal", "alibi", "rope", "none"])
def test_causal_models_never_read_the_future(block, position):
    model = make(block=block, position=position)
    x = tokens(B=1)
    emb = model.embed(x).detach().requires_grad_(True)
    # Differentiate every output before t with respect to the embeddings from t on.
    t = 11
    with model.hooks({"hook_embed": lambda _x, _n: emb}):
        logits = model(x)
    logits[:, :t].sum().backward()
    assert emb.grad[:, t:].abs().max() == 0  # exact: future scores are -inf, their weights and gradients exactly 0
    assert emb.grad[:, :t].abs().max() > 0


def test_fast_and_explicit_attention_paths_agree():
    """The fused path (SDPA + running means) equals the T×T matrix form in float64."""
    for kw in (
        dict(block="sas"),
        dict(block="sas", causal=False),
        dict(block="vskipinit"),
        dict(block="pre_ln", position="alibi"),
        dict(block="pre_ln", position="alibi", causal=False),
        dict(block="sas_p", position="rope"),
    ):
        model = make(**kw)
        for p in model.parameters():  # move away from the special init so A != C
            p.data.add_(0.05 * torch.randn_like(p))
        x = tokens()
        pad = torch.ones_like(x, dtype=torch.bool)
        pad[2, 15:] = False
        for padding in (None, pad):
            fast = model(x, padding_mask=padding)
            names = {f"blocks.{i}.attn.hook_pattern": (lambda a, n: a) for i in range(3)}
            with model.hooks(names):
                explicit = model(x, padding_mask=padding)
            keep = slice(None) if padding is None else pad
            torch.testing.assert_close(explicit[keep], fast[keep], rtol=0, atol=1e-10, msg=str(kw))


def test_head_mask_gradient_is_context_dot_gradient():
    """∂L/∂ξ_h = Σ_tokens Att_h·∂L/∂Att_h: one backward pass gives the importance."""
    model = make()
    mask = torch.ones(3, 4, dtype=torch.float64, requires_grad=True)
    contexts = {}

    def keep(z, name):
        z.retain_grad()
        contexts[name] = z

    with model.hooks({f"blocks.{i}.attn.hook_z": keep for i in range(3)}):
        model(tokens(), head_mask=mask).logsumexp(-1).sum().backward()
    for layer in range(3):
        z = contexts[f"blocks.{layer}.attn.hook_z"]
        expected = (z * z.grad).sum(dim=(0, 2, 3))
        torch.testing.assert_close(mask.grad[layer], expected, rtol=1e-10, atol=1e-12)


def test_hook_can_ablate_a_head_like_the_mask():
    model = make()
    mask = torch.ones(3, 4, dtype=torch.float64)
    mask[2, 1] = 0

    def zero_head(z, name):
        z = z.clone()
        z[:, 1] = 0
        return z

    with model.hooks({"blocks.2.attn.hook_z": zero_head}):
        hooked = model(tokens())
    torch.testing.assert_close(hooked, model(tokens(), head_mask=mask), rtol=0, atol=1e-12)
    with pytest.raises(KeyError, match="unknown hook point"):
        with model.hooks({"blocks.9.attn.hook_z": zero_head}):
            pass


def test_per_token_head_mask_matches_layer_mask_when_constant():
    model = make()
    x = tokens()
    mask = random_mask(3, 4)
    per_token = mask[:, None, :, None].expand(3, x.shape[0], 4, x.shape[1])
    torch.testing.assert_close(model(x, head_mask=per_token), model(x, head_mask=mask), rtol=0, atol=1e-12)
