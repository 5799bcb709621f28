"""Analyses that serve several papers; each paper's own analyses live in repro.papers.<paper>.

heads, head_importance  head masks, single-head ablation and gradient importance
bleu, significance      corpus BLEU and paired significance tests
decoding                cached greedy decoding of an encoder-decoder
training_curves         loss curves of logged runs
throughput              interleaved training and inference tokens/s
parameter_count         closed-form parameter counts of the model family
device                  the --device argument of analysis steps
residual_stream         a decoder's residual stream read as an ensemble (logit-lens readouts, module sums)
bias_diversity          the bias-diversity decomposition of an ensemble's members
"""
