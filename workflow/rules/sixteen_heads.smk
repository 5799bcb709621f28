# "Are Sixteen Heads Really Better than One?" (Michel, Levy & Neubig, NeurIPS 2019).
# Synthetic task -> one model per (task, seed) -> ablation sweeps and pruning curves per run
# (tidy CSVs) -> gathered tables -> one notebook per figure/table -> claims.
#   cls models (BERT analogue) on nli, sst2, cola, mrpc; s2s models (WMT/IWSLT analogue) on mt, iwslt.
#   Table 4 times one nli run before and after physical pruning; Fig. 5 reads the iwslt snapshots.
#   The tasks of pretrain.tasks are fine-tuned from a masked-LM body pre-trained on their inputs
#   (sixteen_heads_pretrain), the synthetic stand-in for BERT's pre-training.
#   Paper scale (data_source hub): the task files come from the paper's datasets (sixteen_heads_hub_data)
#   and the cls runs are fine-tuned from the converted bert-base-uncased (sixteen_heads_convert).


include: "sixteen_heads_common.smk"


wildcard_constraints:
    task=r"[a-z0-9]+",


rule sixteen_heads_data:
    output:
        data=f"{SH_DIR}/data/tasks/{{task}}.npz",
        card=f"{SH_DIR}/data/tasks/{{task}}.card.json",
    log:
        f"{RESULTS}/logs/{SH}/data/{{task}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/data/{{task}}.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        sizes=sh_size_args,
        generator=sh_param_args,
        seed=SH_CFG["data_seed"],
    shell:
        "python -m repro data synthetic --task {wildcards.task} --seed {params.seed} {params.sizes} {params.generator} "
        "--out {output.data} > {log} 2>&1"


# Paper scale (data_source hub): the same task file from the paper's dataset (GLUE, WMT14 En-Fr + MTNT,
# IWSLT), tokenised with the family's pretrained tokenizer; sizes cap each split's rows.
rule sixteen_heads_hub_data:
    output:
        data=f"{SH_DIR}/data/hub_tasks/{{task}}.npz",
        card=f"{SH_DIR}/data/hub_tasks/{{task}}.card.json",
    log:
        f"{RESULTS}/logs/{SH}/hub_data/{{task}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/hub_data/{{task}}.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=32000,
        runtime=240,
    params:
        sizes=sh_size_args,
        tokenizer=sh_hub_tokenizer,
        max_len=sh_hub_max_len,
        options=sh_hub_options,
        seed=SH_CFG["data_seed"],
    shell:
        "python -m repro sixteen_heads hub-data --task {wildcards.task} --tokenizer {params.tokenizer:q} "
        "{params.sizes} --max-len {params.max_len} --seed {params.seed} {params.options} "
        "--out {output.data} > {log} 2>&1"


# Paper scale: the pretrained checkpoint a family is fine-tuned from (hub.pretrained), as our model.
rule sixteen_heads_convert:
    output:
        model=f"{SH_PRETRAINED_DIR}/{{family}}/model.safetensors",
        config=f"{SH_PRETRAINED_DIR}/{{family}}/model.json",
    log:
        f"{RESULTS}/logs/{SH}/convert/{{family}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/convert/{{family}}.tsv"
    wildcard_constraints:
        family="cls",
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        checkpoint=sh_pretrained_checkpoint,
        out_dir=parent_dir,
    shell:
        "python -m repro sixteen_heads convert --checkpoint {params.checkpoint:q} --out-dir {params.out_dir} "
        "> {log} 2>&1"


# The masked-LM body a task's classifiers are fine-tuned from (pretrain.tasks; synthetic data).
rule sixteen_heads_pretrain:
    input:
        data=sh_task_file,
    output:
        model=f"{SH_PRETRAINED_DIR}/mlm_{{task}}/model.safetensors",
        config=f"{SH_PRETRAINED_DIR}/mlm_{{task}}/model.json",
    log:
        f"{RESULTS}/logs/{SH}/pretrain/{{task}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/pretrain/{{task}}.tsv"
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: SH_CFG["threads"]
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        spec=sh_pretrain_spec,
        run_dir=parent_dir,
    shell:
        "python -m repro sixteen_heads pretrain --task-file {input.data} --spec {params.spec:q} "
        "--run-dir {params.run_dir} --threads {threads} > {log} 2>&1"


rule sixteen_heads_train:
    input:
        data=sh_task_file,
        init=sh_init_input,
    output:
        model=f"{SH_DIR}/runs/{{task}}/seed{{seed}}/model.safetensors",
        run=f"{SH_DIR}/runs/{{task}}/seed{{seed}}/run.json",
        metrics=f"{SH_DIR}/runs/{{task}}/seed{{seed}}/metrics.jsonl",
    log:
        f"{RESULTS}/logs/{SH}/train/{{task}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/train/{{task}}_seed{{seed}}.tsv"
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: SH_CFG["threads"]
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        spec=sh_train_spec,
        run_dir=parent_dir,
        init=sh_init_arg,
    shell:
        "python -m repro sixteen_heads train --task-file {input.data} --spec {params.spec:q} "
        "--run-dir {params.run_dir} --threads {threads} {params.init} > {log} 2>&1"


rule sixteen_heads_ablate:
    input:
        data=sh_task_file,
        model=rules.sixteen_heads_train.output.model,
    output:
        f"{SH_DIR}/data/runs/{{task}}_seed{{seed}}_ablation.csv",
    log:
        f"{RESULTS}/logs/{SH}/ablate/{{task}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/ablate/{{task}}_seed{{seed}}.tsv"
    conda:
        ENV
    threads: SH_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        spec=sh_analysis_spec,
        device=SH_ANALYSIS_DEVICE,
    shell:
        "python -m repro sixteen_heads ablate --model {input.model} --task-file {input.data} "
        "--spec {params.spec:q} --threads {threads} --device {params.device} --out {output} > {log} 2>&1"


rule sixteen_heads_prune:
    input:
        data=sh_task_file,
        model=rules.sixteen_heads_train.output.model,
        ablation=sh_ablation_input,
    output:
        importance=f"{SH_DIR}/data/runs/{{task}}_seed{{seed}}_importance.csv",
        pruning=f"{SH_DIR}/data/runs/{{task}}_seed{{seed}}_pruning.csv",
    log:
        f"{RESULTS}/logs/{SH}/prune/{{task}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/prune/{{task}}_seed{{seed}}.tsv"
    conda:
        ENV
    threads: SH_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        spec=sh_analysis_spec,
        device=SH_ANALYSIS_DEVICE,
        ablation=sh_ablation_arg,
    shell:
        "python -m repro sixteen_heads prune --model {input.model} --task-file {input.data} "
        "--spec {params.spec:q} --threads {threads} --device {params.device} {params.ablation} "
        "--importance-out {output.importance} --out {output.pruning} > {log} 2>&1"


rule sixteen_heads_epochs:
    input:
        data=sh_task_file,
        model=rules.sixteen_heads_train.output.model,
    output:
        f"{SH_DIR}/data/runs/{{task}}_seed{{seed}}_epochs.csv",
    log:
        f"{RESULTS}/logs/{SH}/epochs/{{task}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/epochs/{{task}}_seed{{seed}}.tsv"
    conda:
        ENV
    threads: SH_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        spec=sh_analysis_spec,
        device=SH_ANALYSIS_DEVICE,
    shell:
        "python -m repro sixteen_heads epochs --model {input.model} --task-file {input.data} "
        "--spec {params.spec:q} --threads {threads} --device {params.device} --out {output} > {log} 2>&1"


rule sixteen_heads_speed:
    input:
        data=f"{SH_TASK_DIR}/{SH_SPEED['task']}.npz",
        model=f"{SH_DIR}/runs/{SH_SPEED['task']}/seed{SH_SPEED['seed']}/model.safetensors",
        importance=f"{SH_DIR}/data/runs/{SH_SPEED['task']}_seed{SH_SPEED['seed']}_importance.csv",
    output:
        timings=f"{SH_DIR}/data/speed.csv",
        facts=f"{SH_DIR}/data/speed_models.csv",
    log:
        f"{RESULTS}/logs/{SH}/speed.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/speed.tsv"
    priority: PRIORITY_TIMING
    conda:
        ENV
    # Timed with the 2 threads of the catalog's analogue (torch.set_num_threads(2)); as a timing job it
    # holds every core, so that no other job runs beside it.
    threads: TIMING_THREADS
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        threads=2,
        spec=sh_speed_spec,
        device=SH_ANALYSIS_DEVICE,
    shell:
        "python -m repro sixteen_heads speed --model {input.model} --task-file {input.data} "
        "--importance {input.importance} --spec {params.spec:q} --threads {params.threads} --device {params.device} "
        "--out {output.timings} --facts-out {output.facts} > {log} 2>&1"


rule sixteen_heads_gather:
    input:
        sh_gather_inputs,
    output:
        ablation=f"{SH_DIR}/data/ablation.csv",
        importance=f"{SH_DIR}/data/importance.csv",
        pruning=f"{SH_DIR}/data/pruning.csv",
        epochs=f"{SH_DIR}/data/epochs.csv",
    log:
        f"{RESULTS}/logs/{SH}/gather.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/gather.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        groups=sh_gather_groups,
    shell:
        "python -m repro gather {params.groups} > {log} 2>&1"


SH_ABLATION = f"{SH_DIR}/data/ablation.csv"
SH_PRUNING = f"{SH_DIR}/data/pruning.csv"
SH_IMPORTANCE = f"{SH_DIR}/data/importance.csv"
SH_EPOCHS = f"{SH_DIR}/data/epochs.csv"
SH_SPEED_TIMINGS = f"{SH_DIR}/data/speed.csv"
SH_SPEED_MODELS = f"{SH_DIR}/data/speed_models.csv"
SH_PARAMS = {"alpha": SH_CFG["analysis"]["alpha"]}

register_notebook(SH, "fig01", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "table01", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "table02", [SH_ABLATION], SH_PARAMS, source="keep_one_head")
register_notebook(SH, "table03", [SH_ABLATION], SH_PARAMS, source="keep_one_head")
register_notebook(SH, "fig02", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "fig03", [SH_PRUNING, SH_IMPORTANCE], SH_PARAMS)
register_notebook(SH, "table05", [SH_ABLATION], SH_PARAMS, source="keep_one_head")
register_notebook(SH, "table06", [SH_ABLATION], SH_PARAMS, source="keep_one_head")
register_notebook(SH, "table04", [SH_SPEED_TIMINGS, SH_SPEED_MODELS], SH_PARAMS)
register_notebook(SH, "fig04", [SH_PRUNING], SH_PARAMS)
register_notebook(SH, "fig05", [SH_EPOCHS], SH_PARAMS)
register_notebook(SH, "fig06", [SH_PRUNING], SH_PARAMS)
