"""Kamigaito et al., "Diversity of Transformer Layers" (2025): everything particular to this paper.

checks             the config section check
commands           `python -m repro layer_diversity <action>`: data, train, readout, collect, toy, ...
claims/            the registered claims of every figure and table, and DEVIATIONS, one module per
                   figure group (identities, correlations, toy, depth, redundancy; common: inputs,
                   the pairs each claim reads and their gates)
specs              the run spec of one (model family, seed) job and the hub-data spec
gates_and_nulls    the health gates and nulls its claims declare
tables             the per-figure tables built from every run's readout
information        the information-theoretic diversity of discrete members
layer_ensemble     the per-layer tables of one readout (decompositions, accuracies)
toy_ensemble       the toy ensembles of Fig 1
depth_scaling      accuracy against depth: the log fit and diminishing doublings (Fig 6)
block_duplication  a trained block duplicated in place (Fig 7's intervention)

The residual-stream readout and the bias-diversity decomposition it applies are shared analyses
(repro.analysis.residual_stream, repro.analysis.bias_diversity).
"""
