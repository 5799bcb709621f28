"""Studies across the four works: one paper's measure applied to another paper's trained models.

Every claim here is of class "new finding" (no paper states it); each was written, with its gate, null and
smallest effect of interest, before any of its results existed (docs/decisions/0051-cross-paper-claims.md).
The package trains nothing: it reads the runs of the other papers by path (the rules pass their
directories) and imports no paper package; what it needs from one paper's code lives in the shared
library (repro.analysis).

checks            the config section check
commands          `python -m repro cross_paper <action>`: block-eval, collect-blocks
claims            the registered claims of every figure, and DEVIATIONS
specs             which runs each study reads, from the config
gates_and_nulls   the health gate and the nulls its claims declare
tables            the per-figure tables stacked from every run's evaluation
block_heads       study 1: Sixteen Heads' importance and prune-by-importance curve of a decoder
block_diversity   study 2: the bias-diversity decomposition of a decoder's layer increments
"""
