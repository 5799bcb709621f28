# "Simplifying Transformer Blocks" (He & Hofmann, ICLR 2024).
# Decoder language models on the code corpus (at paper scale, the hub CodeParrot data); one run
# per (variant, seed), shared between figures; each figure's data is a tidy CSV read by its
# notebook and claims.
#   runs      -> {item}_curves.csv (loss vs step and time), {item}_gains.csv (gain trajectories)
#   no runs   -> structure_*.csv (inventories, exact identities, parameter counts),
#                throughput_*.csv (interleaved tokens/s), variants.csv (what each variant is)


include: "simplified_blocks_common.smk"


# Paper scale (data.source hub): CodeParrot from the hub, encoded by the paper's tokenizer into
# token files of the offline corpus's format, so the training step reads either unchanged.
rule simplified_blocks_hub_tokens:
    output:
        train=f"{SB_HUB_TOKENS}/train.npz",
        valid=f"{SB_HUB_TOKENS}/valid.npz",
        card=f"{SB_HUB_TOKENS}/card.json",
    log:
        f"{RESULTS}/logs/{SB}/hub_tokens.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/hub_tokens.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=16000,
        runtime=240,
    params:
        tokenizer=SB_DATA_CFG.get("tokenizer", ""),
        train_files=SB_DATA_CFG.get("train_files", 1),
        valid_files=SB_DATA_CFG.get("valid_files", 1),
        shuffle_seed=SB_DATA_CFG.get("shuffle_seed", 0),
        vocab_size=sb_hub_vocab_size(),
        vocab_key="simplified_blocks.model.vocab_size" if "vocab_size" in SB_CFG["model"] else "tokenizer.vocab_size",
        mirror=mirror_option(SB_DATA_CFG),
        out_dir=parent_dir,
    shell:
        "python -m repro data hub-tokens --dataset codeparrot_ds --valid-dataset codeparrot_ds_valid "
        "--tokenizer {params.tokenizer:q} --out-dir {params.out_dir} --train-rows {params.train_files} "
        "--valid-rows {params.valid_files} --shuffle-seed {params.shuffle_seed} "
        "--vocab-size {params.vocab_size} --vocab-key {params.vocab_key} {params.mirror} > {log} 2>&1"


rule simplified_blocks_train:
    input:
        train=sb_token_file("train"),
        valid=sb_token_file("valid"),
    output:
        model=f"{SB_RUNS}/{{variant}}/seed{{seed}}/model.safetensors",
        run=f"{SB_RUNS}/{{variant}}/seed{{seed}}/run.json",
        metrics=f"{SB_RUNS}/{{variant}}/seed{{seed}}/metrics.jsonl",
        heldout=f"{SB_RUNS}/{{variant}}/seed{{seed}}/heldout.json",
    log:
        f"{RESULTS}/logs/{SB}/train/{{variant}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/train/{{variant}}_seed{{seed}}.tsv"
    conda:
        ENV
    threads: SB_CFG["threads"]
    resources:
        mem_mb=SB_TRAIN_MEM_MB,
        runtime=60,
    params:
        spec=sb_run_spec,
        eval_chunks=sb_eval_chunks,
        heldout_chunks=sb_heldout_chunks,
        run_dir=parent_dir,
    shell:
        "python -m repro train lm --spec {params.spec:q} --train-tokens {input.train} --valid-tokens {input.valid} "
        "--eval-chunks {params.eval_chunks} --heldout-chunks {params.heldout_chunks} --run-dir {params.run_dir} "
        "--threads {threads} > {log} 2>&1"


# One job writes every figure's curves table: each run is read once, and the smoke DAG saves a
# Python start per figure.
rule simplified_blocks_curves:
    input:
        sb_all_figure_runs,
    output:
        [sb_data(f"{item}_curves.csv") for item in sorted(SB_CFG["figures"])],
    log:
        f"{RESULTS}/logs/{SB}/curves.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/curves.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        figures=sb_curves_json,
        out_dir=parent_dir,
    shell:
        "python -m repro simplified_blocks curves --figures {params.figures:q} --out-dir {params.out_dir} > {log} 2>&1"


rule simplified_blocks_gains:
    input:
        sb_figure_runs,
    output:
        f"{SB_DATA}/{{item}}_gains.csv",
    log:
        f"{RESULTS}/logs/{SB}/gains/{{item}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/gains/{{item}}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        runs=run_dirs,
    shell:
        "python -m repro simplified_blocks gains --runs {params.runs} --out {output} > {log} 2>&1"


rule simplified_blocks_variants:
    output:
        sb_data("variants.csv"),
    log:
        f"{RESULTS}/logs/{SB}/variants.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/variants.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        specs=sb_specs_json,
    shell:
        "python -m repro simplified_blocks variants --specs {params.specs:q} --out {output} > {log} 2>&1"


rule simplified_blocks_structure:
    output:
        inventory=sb_data("structure_inventory.csv"),
        checks=sb_data("structure_checks.csv"),
        params=sb_data("structure_params.csv"),
    log:
        f"{RESULTS}/logs/{SB}/structure.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/structure.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        models=sb_blocks_json,
        paper_size=sb_paper_size_json,
    shell:
        "python -m repro simplified_blocks structure --models {params.models:q} --paper-size {params.paper_size:q} "
        "--out-inventory {output.inventory} --out-checks {output.checks} --out-params {output.params} "
        "--threads {threads} > {log} 2>&1"


rule simplified_blocks_throughput:
    output:
        timings=sb_data("throughput_timings.csv"),
        models=sb_data("throughput_models.csv"),
    log:
        f"{RESULTS}/logs/{SB}/throughput.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/throughput.tsv"
    priority: PRIORITY_TIMING
    conda:
        ENV
    # A timing job holds every core, so that no other job runs beside it; it times with the
    # threads of its settings (throughput.threads).
    threads: TIMING_THREADS
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        models=sb_blocks_json,
        settings=sb_throughput_json,
    shell:
        "python -m repro simplified_blocks throughput --models {params.models:q} --settings {params.settings:q} "
        "--out-timings {output.timings} --out-models {output.models} > {log} 2>&1"


# -- notebooks: one per figure or table, reading only the tidy CSVs above ------------------------
# The loss plots mark the reference levels (unigram, bigram) of the decoders' held-out split, passed as `levels`.
SB_LEVELS = sb_data("lm_reference_levels.json")
LEVELS = {"levels": SB_LEVELS}
# The runs whose seeds set the run-to-run spread the one-seed figures draw as error bars.
NOISE_RUNS = sb_data("fig26_curves.csv")
register_notebook(SB, "fig01", [sb_data("structure_inventory.csv")])
register_notebook(
    SB, "fig02", [sb_data("fig26_curves.csv"), sb_data("fig02_curves.csv"), sb_data("variants.csv"), SB_LEVELS], LEVELS
)
register_notebook(
    SB,
    "fig03",
    [sb_data("fig03_curves.csv"), sb_data("variants.csv"), SB_LEVELS, NOISE_RUNS],
    {**LEVELS, "noise_runs": NOISE_RUNS},
)
register_notebook(SB, "fig04", [sb_data("fig04_gains.csv"), sb_data("fig04_curves.csv"), sb_data("fig03_curves.csv")])
register_notebook(
    SB,
    "fig05",
    [sb_data("fig26_curves.csv"), sb_data("throughput_models.csv"), sb_data("throughput_timings.csv"), SB_LEVELS],
    LEVELS,
)
register_notebook(
    SB,
    "fig09",
    [
        sb_data("fig09_curves.csv"),
        sb_data("fig03_curves.csv"),
        sb_data("variants.csv"),
        sb_data("structure_checks.csv"),
        NOISE_RUNS,
        SB_LEVELS,
    ],
    {**LEVELS, "noise_runs": NOISE_RUNS},
)
register_notebook(
    SB, "fig10", [sb_data("structure_inventory.csv"), sb_data("structure_checks.csv")], source="block_figure"
)
register_notebook(
    SB, "fig11", [sb_data("structure_inventory.csv"), sb_data("structure_checks.csv")], source="block_figure"
)
register_notebook(
    SB,
    "fig15",
    [sb_data("fig03_curves.csv"), sb_data("fig15_curves.csv"), sb_data("variants.csv"), SB_LEVELS, NOISE_RUNS],
    {**LEVELS, "noise_runs": NOISE_RUNS},
)
register_notebook(SB, "fig16", [sb_data("fig16_gains.csv")], source="gain_ratios")
for _item, _symbols in (("fig17", "alpha"), ("fig18", "beta"), ("fig19", "gamma"), ("fig20", "beta_FF")):
    register_notebook(SB, _item, [sb_data("fig04_gains.csv")], {"symbol": _symbols}, source="gain_weights")
register_notebook(SB, "fig21", [sb_data("fig21_gains.csv")], source="gain_ratios")
register_notebook(SB, "fig22", [sb_data("fig22_gains.csv"), sb_data("fig04_gains.csv")])
register_notebook(SB, "fig26", [sb_data("fig26_curves.csv"), SB_LEVELS], LEVELS)
register_notebook(
    SB,
    "table01",
    [sb_data("structure_params.csv"), sb_data("throughput_models.csv"), sb_data("throughput_timings.csv")],
)
# Ablations read as loss curves: each figure's runs (shared with the base runs where the catalog
# says so) and the variants table, which tells the notebooks what each run is.
for _item in ("fig06", "fig12", "fig13", "fig14", "fig23", "fig24", "fig25"):
    register_notebook(
        SB,
        _item,
        [sb_data(f"{_item}_curves.csv"), sb_data("variants.csv"), SB_LEVELS, NOISE_RUNS],
        {**LEVELS, "noise_runs": NOISE_RUNS},
    )
# Fig 8 also reads the interleaved timing, which sets its runs' time axis.
SPEEDS = [sb_data("throughput_models.csv"), sb_data("throughput_timings.csv")]
register_notebook(
    SB,
    "fig08",
    [sb_data("fig08_curves.csv"), sb_data("variants.csv"), SB_LEVELS, NOISE_RUNS, *SPEEDS],
    {**LEVELS, "noise_runs": NOISE_RUNS, "speeds": SPEEDS},
)
register_notebook(
    SB,
    "fig28",
    [sb_data("fig28_curves.csv"), sb_data("variants.csv"), NOISE_RUNS, SB_LEVELS],
    {**LEVELS, "noise_runs": NOISE_RUNS},
)


include: "simplified_blocks_mlm.smk"
