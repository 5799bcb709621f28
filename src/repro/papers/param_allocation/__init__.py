"""Yu et al., "Allocation of Parameters in Transformers" (arXiv 2510.03784, 2025): everything
particular to this paper.

    checks             the config section check
    commands           `python -m repro param_allocation <action>`
    specs              the specs of its jobs, built from the config
    claims/            the registered claims of every figure and table, and DEVIATIONS, one module per
                       figure group (theory, sweeps, saturation, replacement, decoders; common: inputs,
                       thresholds and the teachers' gate they share)
    gates_and_nulls    the health gates of its runs and the nulls of its claims
    theory/            the exact theory: softmax Jacobian, allocation bound, low-rank scores
    head_allocation    head-count sweeps and low-rank students on synthetic streams (Figs 2, 3, 7, 8)
    u_shape            per-seed edge ratios of a head-count curve (the U-shape claims)
    head_replacement, replacement_study, recovery
                       single-head replacement in trained decoders (Figs 4, 6, 9)
    logit_norms        attention logit statistics (Fig 10)
    head_dim_decoders  decoders across head dims and lengths (Fig 5)
    plots              figure helpers of the notebooks

The one-layer attention models of the head-count sweeps are shared (repro.models.shallow): another
study reads the trained sweeps too.
"""
