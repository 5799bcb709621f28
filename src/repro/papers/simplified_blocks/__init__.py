"""He & Hofmann, "Simplifying Transformer Blocks" (ICLR 2024): everything particular to this paper.

checks             the config section check
commands           `python -m repro simplified_blocks <action>`: structure, variants, throughput,
                   curves, gains, and the masked-LM actions of mlm_commands
mlm_commands       the masked-LM part: prose, glue-data, pretrain, finetune, glue, hub-glue
claims/            the registered claims of every figure and table, and DEVIATIONS, one module per
                   figure group (losses, structure, equal_time, gains, ablations, masked_lm; common:
                   the margins and helpers they share)
claim_table        what every claims module shares: block names, the regions and rules of a loss gap
block_structure    what a block is made of, and the exact identities of the simplified blocks
structure_checks   those identities and parameter counts measured on the configured variants
lr_duality         the learning-rate duality of reparameterised weights (Fig 9)
variant_table      one row per variant: its resolved block spec and training settings
equal_budget       losses at an equal budget of steps or seconds
run_noise          the run-to-run spread behind the claims' intervals (the compared runs' own seeds),
                   and the bars of the one-seed figures (Fig 26's seeds, for orientation)
compared_runs      the runs each claim compares, and the claims that compare the same runs
gain_trajectories  the trainable gains of runs trained with log_gains (Figs 4, 16-22)
glue_finetune      fine-tuning a pre-trained encoder on the GLUE stand-in, and its metrics
plots              the notebooks' plot helpers (gain trajectories, loss curves in two panels)
block_diagram      the drawing of a block (Figs 1, 10, 11)
"""
