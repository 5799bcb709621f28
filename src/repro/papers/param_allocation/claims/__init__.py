"""Claims of "Allocation of Parameters in Transformers" (Yu et al., arXiv 2510.03784, 2025).

The paper's full text was not available; the checks are the catalog's "Machine check"s
(../shared/papers/param_allocation.md §2), with every threshold fixed here before any laptop run.
Every empirical claim is judged by 95% t-intervals over seeds (repro.pipeline.decisions), one value
per seed, several comparisons combined so that each must hold; fewer than 3 seeds read "not
measurable". The ranks, lengths and positions a claim reads are required by the config check
(checks.py) at the scales where claims are judged.

fig01  Theorem 2 (saturation): ‖J(z)‖₂ ≤ e^{2Λ}/L for every sampled bounded logit vector (identity);
       L·‖J‖₂ stays bounded: its seed-free coefficient of variation across L is < 0.5 (uniform logits;
       simulation).
fig02, fig07, fig08  the heads sweep at a fixed width, per task and position kind. Learned positions:
       U-shaped, i.e. per seed loss(H_min) − 1.1·loss(H*) and loss(H_max) − 1.1·loss(H*) each ≥ 0, where
       H* is the interior H of lowest seed-mean loss (the catalog's "each edge ≥ 1.1× the minimum", on
       seed means). ALiBi-type heads: the left arm alone, loss(H_min) − 1.1·loss(H*) ≥ 0 with H* the
       H > H_min of lowest seed-mean loss.
fig03  Corollary 2 with truncated-SVD heads (constructed inputs): per-entry error ≤ the corollary's
       bound and L·max|p − p′| ≤ 4Λe^{2Λ} (identity); the log-log slope of the output error relative
       to the output's norm, ‖o − o′‖/‖o‖, against L is ≤ −0.3 for every rank below full (simulation).
       Trained students, on the excess MSE relative to the output's power (the paper's quantity: the
       output's power itself falls with L): at r = 4 it falls between consecutive lengths; the gap
       err(r_min) − err(r_max) at the longest L is ≤ 0.5× the gap at the shortest.
fig04  single-head replacement in the trained decoders, in units of recovery R = (L_abl − L_student) /
       (L_abl − L_teacher), per seed with its own replaced head's gap: (a) R(8) ≥ 0.9 after fine-tuning
       the SVD student, every replaced layer; (b) after fine-tuning, R(SVD) − R(random)
       > 0 for every layer and r ≥ 4 (smallest effect of interest 0.02); (c) R of the fine-tuned SVD
       students never falls by more than 0.02 between consecutive ranks and rises from r_min to r_max
       (smallest effect of interest 0.02), every layer.
fig05  gain(L) = val(d_h min) − val(d_h max) of the multi-layer decoders falls between consecutive L.
fig06  zero-shot SVD students of rank ≤ 8: Δloss = L_student − L_teacher in the first position bucket
       minus that in the last, averaged per seed over (replaced layer, rank), is > 0.
fig09  the median over a seed's (layer, head) cells of R of fine-tuned rank-8 SVD students is ≥ 0.9
       (Fig 4's check (a) extended to all heads; not a check of the paper).
fig10  the share of a seed's (layer, head) cells with Spearman(L, max_s|z_s|) ≥ 0.8 is ≥ 0.5, and the
       same for the logit std.
"""

from __future__ import annotations

# Importing each figure group registers its claims.
from repro.papers.param_allocation.claims import decoders, replacement, saturation, sweeps, theory  # noqa: F401

#: What this analogue does differently from the paper, and why (listed in results/param_allocation/REPRODUCIBILITY.md).
DEVIATIONS = [
    "The paper's full text was not available. Every item follows the catalog's reading of the abstract, the "
    "TL;DR and the public ICLR-2026 reviews: Figs. 1, 3, 7, 8 and 9 and both tables are reconstructions "
    "(marked 'reconstructed from the paper's description'), and the axes and settings of Figs. 2, 4, 5, 6 "
    "and 10 are inferred. Only the findings the sources state (Fig. 2's optimum at 8 heads against a "
    "predicted 32, saturation, logit norms growing with L) are compared with the paper.",
    "Synthetic tasks (Figs. 2, 3, 7, 8): budgets, input dimensions, sequence lengths, steps and learning rates "
    "are unknown; the catalog's instantiation is run at laptop size (a one-layer model, D = H·d_h = 64, "
    "d_model 64, T = 32, 500 steps of 16 sequences, 3 seeds; students of Fig. 3 with the teacher's values "
    "given).",
    "The theory-faithful heads are ALiBi-type heads with a learnable slope and no content query/key. Heads "
    "without content that share a slope compute what one wider head computes: H such heads are computed "
    "exactly by kH heads of dimension d_h/k with tied slopes, so with these heads the best loss cannot rise "
    "with H and the U's right arm cannot appear. Their claims judge the left arm only (too few heads cost "
    "loss); the U-shape is judged on standard heads with learned positions, whose rank-d_h query/key limits "
    "each head's pattern.",
    "Fig. 7's induction step copies the previous 4 tokens of 16 symbols (the catalog's 2 lags left every "
    "head count at 99.8-100% accuracy, outside the sweep's health gate; docs/decisions/0013).",
    "Fig. 3's trained arm: the teacher's A is rescaled so that its realised logits reach Λ (the largest |z| "
    "of a calibration draw of 1024 × 1024 unit-sphere pairs is Λ = 3; with ‖A‖₂ = Λ alone they reach about "
    "1.2 and the attention is nearly uniform), so held-out logits exceed Λ slightly in the tail. Students "
    "train the catalog's 800 steps of 16 key sets at lr 2e-2 (catalog 1e-3, which leaves even the full-rank "
    "student far from the teacher) on L ∈ {16, 64, 256}: L = 1024 cost two thirds of the students' time "
    "(docs/decisions/0015 and 0019). Their gate asks for convergence: within 5% of the truncated-SVD student, "
    "a stationary point of their loss that a converged student ties (docs/decisions/0018), instead of at or below it.",
    "Theorem 1's bound uses ε = 0 (unknown) with C = 1.3 and γ = 0.02 as stated; its exact integer "
    "minimiser is computed numerically instead of the paper's Eq. 3, which is not available.",
    "Pretrained models: the paper's 'small pre-trained models' are not named and no download is possible. "
    "Small decoders are trained here on the offline code corpus (the Python sources of torch 2.13, byte-level "
    "BPE with 2,048 tokens): 4 layers, d_model 128, 4 heads of 32, learned positions, context 128, no "
    "query/key/value/output biases (so each head is an exact bilinear form), 600 steps of 16 × 128 "
    "tokens (the catalog's 3000 steps of 32 × 256 are 20 times the tokens), 3 seeds. They end near the corpus's "
    "bigram level, far less trained than any pretrained model.",
    "Fine-tuning a replaced head: the student alone is fitted to the teacher head's output (MSE on cached "
    "attention inputs of 256 training chunks; 200 Adam steps at 1e-3, the catalog's values), the "
    "alternative objective the catalog allows, instead of the language-model loss through the whole model, "
    "which costs about 30 times more on a CPU. The reported loss is the language-model loss of the decoder "
    "with the student inserted.",
    "Fig. 5: 4-layer decoders of width 64 with 4 heads and d_h ∈ {4, 16} on the code corpus at L ∈ {32, 128} "
    "(600 steps of 1,024 tokens, 2 seeds) instead of 6-layer decoders on 1% of WikiText-103 (the catalog: "
    "d_h ∈ {4, 8, 16}, L ∈ {32, 128, 512}, 1,500 steps); the plotted quantity (final validation loss) is "
    "inferred. At L = 512 a batch holds two sequences and 600 steps leave the decoders above the health "
    "gate, so the grid keeps the two shorter lengths (docs/decisions/0014); about 600k training tokens per "
    "decoder (the paper's runs see about 1M tokens, epochs unknown).",
    "Figs. 4 and 6: the catalog's head 0 is replaced by the head of each layer (and seed) whose removal costs "
    "the most loss on training chunks, so that the replaced head matters; its held-out ablation gap gates the "
    "recovery and per-position claims.",
    "Fig. 6: the catalog's second architecture (post-LN or ALiBi) is not trained, to stay in budget; Fig. 6 "
    "is the per-position analysis of the Fig. 4 replacements. The position buckets [0,16), [16,64), [64,128) "
    "halve the catalog's [0,32), [32,128), [128,256) for the context of 128.",
    "Fig. 10: the decoders' context is 128, so prefix lengths run from 8 to 128 (the catalog suggests up to "
    "256). The maximum of L logits grows with L even for independent logits (extreme values), so the "
    "logit std and the half-range are reported beside the catalog's max |z|.",
    "Fig. 9 shows every head of the first and last layer at rank 8 (the catalog's proposal for an unknown "
    "appendix figure); its claim extends Fig. 4's recovery check to all heads and is not a claim of the paper.",
    "Tables 1 and 2 are pipeline records (run configurations; checks and verdicts): no table of the paper is known.",
]
