"""Claims of "Simplifying Transformer Blocks" (He & Hofmann, ICLR 2024).

Every tolerance below was fixed before any laptop-scale result of its figure existed (catalog
../shared/papers/simplified_blocks.md §2, "Check"), except the smallest effects of interest, the
ordering ends and the reachability gates, which came later with the equivalence rules, from the
paper's effect sizes and the claims' regions, not from any verdict:

- L_x is a run's final eval loss, the mean of its last 3 evaluations.
- A loss comparison is a contrast of final losses taken per seed (same seed, same data order) over the
  seeds its runs share, and judged by its 95% interval against the claim's region
  (repro.pipeline.decisions.judge_contrasts). The interval's width comes from the compared runs' own
  replicates ("σ of the runs' own seeds"): the run-to-run spread of the additive two-way fit over the runs of the claim's
  figure on the seeds the compared runs share (run_noise.judge_own). Runs that share fewer than two
  seeds have no spread of their own, and their comparison is "not measurable at this scale", whatever
  the spread of other runs (the one-seed figures at laptop scale).
- δ = 2% of the Pre-LN loss: the equivalence margin of "matches" (the gap's interval within ±δ), the
  threshold of "clearly worse", and the smallest effect of interest of a directional claim ("lower",
  "grows": an interval within ±δ of 0 reads "no effect as large as δ"). The catalog offers "0.03 nats
  or 2%"; small models end far above the paper's ≈1.16 nats, where a fixed 0.03 nats would be a much
  stricter test than the paper's own figures support.
- ε = 0.5% of the Pre-LN loss: the margin of "no better" / "no worse", how far a step may go against
  an ordering, and the smallest effect of interest of Fig 12's linear-decay gain (which the paper shows
  on a zoomed panel). An ordering's ends must differ as well, with δ their smallest effect of interest,
  so that a flat grid, which no step contradicts, is not an ordering (nor is its reversal, the null).
- Properties of single runs (the gains claims, train = eval) take one number per seed, judged by its 95%
  t-interval over at least three seeds (decisions.judge_parts; docs/decisions/0029-sb-single-run-intervals.md). A claim
  about where a gain or a ratio ends is judged only when the runs moved it as far as its region needs
  (reachability: from 0.2 to the 0.05 line for |β/α|, from 1 to 0.1 of its init for "does not vanish").
- Structural claims are exact: float64 rounding (1e-12) or exact integers.
- Every loss claim is judged only when its reference runs end at least 1 nat below the code corpus'
  unigram level, and declares a null on which it must read "not reproduced" (an untrained run, no
  effect, an order reversed): see repro.papers.simplified_blocks.gates_and_nulls.
- Claims that judge the same runs are declared in compared_runs, each naming what sets it apart.
"""

from repro.papers.simplified_blocks.claims import ablations, equal_time, gains, losses, masked_lm, structure  # noqa: F401  (register)

DEVIATIONS = [
    "Decoder part: CodeParrot is replaced by the offline torch-sources code corpus with a locally trained "
    "byte-level BPE (vocabulary 2,048 at laptop scale; the paper: 50K code-search-net tokenizer).",
    "Base decoders have 4 layers, width 128, 4 heads, d_ff = 4d, T = 64 and batches of 8 sequences for 480 steps "
    "(≈246K tokens; the shortest budget that passed the health rule in config/README.md), in fp32 on one CPU thread per run; the paper trains 18 layers of width 768 at T = 128, batch 128, "
    "for 43K steps (≈700M tokens) with fp16 AMP on an A5000. Losses therefore end far above the paper's ≈1.15 nats.",
    "Positions are learned (as the official code; the paper says sinusoidal). RMSNorm divides by √(mean x² + eps) "
    "with eps = 1e-5, where the official code divides by ‖x‖/√d + eps (the same eps from GPT-2's config; its class "
    "default 1e-8 is never used); the two differ only at ‖x‖/√d ≲ √eps. The final norm is GPT-2's LayerNorm "
    "ln_f after RMSNorm blocks, as the official model keeps it (the paper's text does not name it).",
    "Seeds (laptop): Fig 26's six blocks, Fig 6's narrow Pre-LN and V-SkipInit runs and the gains runs of Fig 4 "
    "train three seeds, every other variant one (Figs 16, 21, 22 and Fig 6's SAS and SAS-P too: only claims whose "
    "gates fail at this scale read them, docs/decisions/0053). The single-run claims (gains, train = eval) are judged by an interval "
    "over their seeds. Each loss comparison is judged by a 95% interval whose width comes from its own runs' "
    "seeds (an additive two-way fit over its figure's runs on those seeds), so at laptop scale the comparisons "
    "of one-seed runs (Figs 3, 8, 9, 12-15, 23-25, 28 and Fig 4's loss) are not measurable (config/README.md).",
    "Loss against time (Figs 5, 8): a run's time is its tokens at its block's training tokens/s in the interleaved "
    "timing (one process holding every core, median over rounds), not the seconds the run measured beside other "
    "jobs; the runs themselves train a fixed number of steps. Fig 28's axis keeps each run's own seconds (its "
    "longer-context runs are not timed; its claim compares final losses).",
    "Fig 3/9/15 grids are reconstructed: β ∈ {0, 0.1, 0.3, 1}, LR ratios {0.1, 0.3} plus the β = 0 and β = 1 runs "
    "as ratios 0 and 1. The laptop scale trains the points the claims compare, by budget: β ∈ {0, 1}, ratio 0.1, "
    "Fig 14's β_FF {0.03, 0.1, 1}, Fig 25's ReLU and slope 0.2, Fig 28's Parallel and SAS. "
    "'LL-tied' follows the official code: the last layer's W^P_init is the transpose of the "
    "chain V_L P_{L-1} ... P_1 V_1 of all other initial matrices, so the whole chain is the identity at init.",
    "Fig 6 compares depth 2 with depth 8 at width 64 (d_ff = 2d), the paper 18 with 72 at width 768; SAS-P without "
    "norm is not run at both depths.",
    "Fig 8 trains 3× the base steps (1,440 at laptop scale); Fig 14's β_FF grid {0.03, 0.1, 0.3, 1} is ours (the paper gives none); "
    "Fig 23 does not run the paper's extra down-weighting of β_SA; Fig 25's largest leaky-ReLU slope is 1 − 1/√L "
    "= 0.5 at our depth (the paper's 0.8 at 18 layers).",
    "Fig 28 (Languini books: 12 layers, width 768, T = 512, 19K steps of 128) becomes the base decoder with "
    "T = 256, batches of 2 sequences (the base tokens per step), ALiBi and GeLU, trained on the code corpus, not "
    "books; perplexity is per BPE token of code. With ALiBi, the shaped attention's C is softmax(M + ALiBi bias), "
    "the attention matrix at zero query-key logits, so that the block is still the identity at initialisation "
    "(the paper does not say how it combined the two).",
]
# The dossier reads DEVIATIONS here: the masked-LM part's are its own.
DEVIATIONS = DEVIATIONS + list(masked_lm.DEVIATIONS)
