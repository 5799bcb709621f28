# "Diversity of Transformer Layers: One Aspect of Parameter Scaling Laws" (Kamigaito et al., 2025).
# Four prompt tasks -> one training job per (family, seed) training every depth (multitask LM loss;
# at paper scale, hub datasets and frozen pretrained checkpoints converted instead of trained)
# -> float64 readouts of each run's residual stream (logit lens + frozen-norm module contributions,
# bias-diversity and information tables) -> per-figure tidy CSVs -> one notebook per item -> claims.


include: "layer_diversity_common.smk"


rule layer_diversity_data:
    output:
        data=expand(f"{LD_DATA}/{{task}}.npz", task=LD_TASKS),
        cards=expand(f"{LD_DATA}/{{task}}.card.json", task=LD_TASKS),
    log:
        f"{RESULTS}/logs/{LD}/data.log",
    benchmark:
        f"{RESULTS}/benchmarks/{LD}/data.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        tasks=LD_TASKS,
        seed=LD_CFG["data"]["seed"],
        train_sizes=ld_train_sizes(),
        test_size=LD_CFG["data"]["test_size"],
        generator_params=ld_data_params(),
        out_dir=parent_dir,
    shell:
        "python -m repro layer_diversity data --tasks {params.tasks} --out-dir {params.out_dir} --seed {params.seed} "
        "--train-sizes {params.train_sizes:q} --test-size {params.test_size} --params {params.generator_params:q} "
        "> {log} 2>&1"


# Paper scale (data.source hub): the same four tasks from SST-2, RTE, AG News and ARC, one directory
# per family because each family's tokenizer cuts the text differently.
rule layer_diversity_hub_data:
    output:
        data=expand(f"{LD_DATA}/{{{{family}}}}/{{task}}.npz", task=LD_TASKS),
        cards=expand(f"{LD_DATA}/{{{{family}}}}/{{task}}.card.json", task=LD_TASKS),
    log:
        f"{RESULTS}/logs/{LD}/hub_data/{{family}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{LD}/hub_data/{{family}}.tsv"
    wildcard_constraints:
        family="|".join(LD_FAMILIES),
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        tasks=LD_TASKS,
        tokenizer=ld_hub_tokenizer,
        hub=ld_hub_ids(),
        train_sizes=ld_train_sizes(),
        test_size=LD_CFG["data"]["test_size"],
        max_tokens=LD_CFG["data"].get("max_tokens", 512),
        mirror=mirror_option(LD_CFG["data"]),
        out_dir=parent_dir,
    shell:
        "python -m repro layer_diversity hub-data --tasks {params.tasks} --tokenizer {params.tokenizer:q} "
        "--out-dir {params.out_dir} --test-size {params.test_size} --train-sizes {params.train_sizes:q} "
        "--hub {params.hub:q} --max-tokens {params.max_tokens} {params.mirror} > {log} 2>&1"


# Trains every depth of one family; with data.source hub, converts the family's pretrained
# checkpoints (one per depth) into the same run layout instead, with no training.
rule layer_diversity_train:
    input:
        data=ld_task_files,
    output:
        models=expand(
            f"{LD_DIR}/runs/{{{{family}}}}/L{{depth}}/seed{{{{seed}}}}/model.safetensors", depth=LD_CFG["depths"]
        ),
        runs=expand(f"{LD_DIR}/runs/{{{{family}}}}/L{{depth}}/seed{{{{seed}}}}/run.json", depth=LD_CFG["depths"]),
    log:
        f"{RESULTS}/logs/{LD}/train/{{family}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{LD}/train/{{family}}_seed{{seed}}.tsv"
    wildcard_constraints:
        family="|".join(LD_FAMILIES),
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: LD_CFG["threads"]
    resources:
        mem_mb=LD_TRAIN_MEM_MB,
        runtime=30,
    params:
        spec=ld_train_spec,
        data_dir=ld_data_dir,
        runs_root=ld_runs_root,
    shell:
        "python -m repro layer_diversity train --spec {params.spec:q} --data-dir {params.data_dir} "
        "--runs-root {params.runs_root} --threads {threads} > {log} 2>&1"


rule layer_diversity_readout:
    input:
        data=ld_task_files,
        models=ld_family_runs,
    output:
        expand(f"{LD_DIR}/data/readout/{{{{family}}}}_seed{{{{seed}}}}/{{table}}.csv", table=LD_READOUT_TABLES),
    log:
        f"{RESULTS}/logs/{LD}/readout/{{family}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{LD}/readout/{{family}}_seed{{seed}}.tsv"
    wildcard_constraints:
        family="|".join(LD_FAMILIES),
    conda:
        ENV
    threads: LD_CFG["threads"]
    resources:
        mem_mb=LD_READOUT_MEM_MB,
        runtime=20,
    params:
        runs=ld_model_dirs,
        tasks=LD_TASKS,
        data_dir=ld_data_dir,
        out_dir=parent_dir,
        batch_size=LD_CFG["analysis"]["batch_size"],
        duplicate_depths=LD_CFG["analysis"]["duplicate_depths"],
        device=LD_ANALYSIS_DEVICE,
    shell:
        "python -m repro layer_diversity readout --runs {params.runs} --family {wildcards.family} "
        "--seed {wildcards.seed} --data-dir {params.data_dir} --tasks {params.tasks} --out-dir {params.out_dir} "
        "--batch-size {params.batch_size} --duplicate-depths {params.duplicate_depths} --threads {threads} "
        "--device {params.device} > {log} 2>&1"


rule layer_diversity_collect:
    input:
        data=ld_collect_task_files(),
        readouts=[f"{path}/units.csv" for path in ld_readout_dirs()],
    output:
        [ld_csv(name) for name in LD_COLLECTED],
    log:
        f"{RESULTS}/logs/{LD}/collect.log",
    benchmark:
        f"{RESULTS}/benchmarks/{LD}/collect.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        inputs=ld_readout_inputs,
        tasks=LD_TASKS,
        data_dir=ld_data_dir,
        stands_for=ld_stands_for(),
        out_dir=parent_dir,
    shell:
        "python -m repro layer_diversity collect --inputs {params.inputs} --data-dir {params.data_dir} "
        "--tasks {params.tasks} --stands-for {params.stands_for:q} --out-dir {params.out_dir} > {log} 2>&1"


rule layer_diversity_toy:
    output:
        ld_csv("fig01_toy"),
    log:
        f"{RESULTS}/logs/{LD}/toy.log",
    benchmark:
        f"{RESULTS}/benchmarks/{LD}/toy.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        examples=LD_TOY["examples"],
        classes=LD_TOY["classes"],
        max_members=LD_TOY["max_members"],
        noise_sd=LD_TOY["noise_sd"],
        offset=LD_TOY["offset"],
        seed=LD_TOY["seed"],
    shell:
        "python -m repro layer_diversity toy --examples {params.examples} --classes {params.classes} "
        "--max-members {params.max_members} --noise-sd {params.noise_sd} --offset {params.offset} "
        "--seed {params.seed} --out {output} > {log} 2>&1"


rule layer_diversity_submodularity:
    output:
        ld_csv("fig06_submodularity"),
    log:
        f"{RESULTS}/logs/{LD}/submodularity.log",
    benchmark:
        f"{RESULTS}/benchmarks/{LD}/submodularity.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        samples=LD_SUBMODULARITY["samples"],
        judged_samples=LD_SUBMODULARITY["judged_samples"],
        classes=LD_SUBMODULARITY["classes"],
        flip_probs=LD_SUBMODULARITY["flip_probs"],
        seed=LD_SUBMODULARITY["seed"],
    shell:
        "python -m repro layer_diversity submodularity --samples {params.samples} "
        "--judged-samples {params.judged_samples} --classes {params.classes} --flip-probs {params.flip_probs} "
        "--seed {params.seed} --out {output} > {log} 2>&1"


register_notebook(LD, "table01", [ld_csv("table01_tasks")])
register_notebook(LD, "fig01", [ld_csv("fig01_toy")])
register_notebook(
    LD,
    "table02",
    [ld_csv("table02_models")],
    {"stands_for": {f: LD_CFG["variants"][f]["stands_for"] for f in LD_FAMILIES}},
)
register_notebook(LD, "fig02", [ld_csv("fig02_reconstruction")])
register_notebook(LD, "fig03", [ld_csv("fig03_units"), ld_csv("fig03_correlations")])
register_notebook(LD, "fig04", [ld_csv("fig04_members"), ld_csv("fig04_groups")])
register_notebook(LD, "fig05", [ld_csv("fig05_prefixes"), ld_csv("fig05_examples"), ld_csv("table01_tasks")])
register_notebook(
    LD,
    "fig06",
    [
        ld_csv("fig06_depth"),
        ld_csv("fig06_fits"),
        ld_csv("fig07_information"),
        ld_csv("fig06_submodularity"),
        ld_csv("fig06_real_layers"),
        ld_csv("table01_tasks"),
    ],
)
register_notebook(LD, "fig07", [ld_csv("fig07_information"), ld_csv("fig07_gains"), ld_csv("fig07_duplication")])
register_notebook(LD, "table03", [ld_csv("table03_summary")])
