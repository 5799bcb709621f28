"""Michel, Levy & Neubig, "Are Sixteen Heads Really Better than One?" (NeurIPS 2019): everything
particular to this paper.

    checks          the config section check
    commands        `python -m repro sixteen_heads <action>`: train, ablate, prune, epochs, speed, ...
    tables          the tables the analyses write: ablations, head importance, pruning curves
    paper_scale     task files from the paper's datasets, fine-tuning from a converted BERT
    claims/         the registered claims of every figure and table, and DEVIATIONS, one module per
                    figure group (ablations, pruning, speed, during_training; common: what they share)
    gates_and_nulls the health gates of its runs and the nulls of its claims
    specs           the specs of its jobs (train, analyses, speed), built from the config section
    runs            the classifier and translator runs on the synthetic tasks: model configs, builders,
                    task objectives, the run directory's model.json
    head_eval       one evaluator per task (accuracy, MCC, F1, BLEU) for a head mask
    head_sweeps     single-head ablations and pruning curves under a head mask
    head_summaries  the tables and statistics the notebooks and claims read
    pruned_speed    inference speed of physically pruned classifiers (Table 4)
"""
