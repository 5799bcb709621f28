"""`python -m repro layer_diversity STEP`: the "Diversity of Transformer Layers" analogue (Kamigaito et al. 2025).

Steps (each is one Snakemake rule of workflow/rules/layer_diversity.smk):
  data      generate the four prompt tasks (sent, entail, topic, mc) into one directory, with cards
  hub-data  paper scale: the four tasks from the hub datasets (SST-2, RTE, AG News, ARC), tokenised
            with one family's own tokenizer, into that family's directory, with cards
  train     train one model family at every depth for one seed, multitask LM loss on the four tasks;
            with source hub, convert the family's frozen pretrained checkpoints instead (no training)
  readout   read every trained model's residual stream on each task's test split (float64) and
            write the bias–diversity and information tables of repro.papers.layer_diversity.layer_ensemble; for
            the depths asked, also the same tables of the model with its last block duplicated;
            --device (config key layer_diversity.analysis_device: auto, cpu, cuda; default cpu)
            is where the float64 copy of each model computes
  collect   stack the readouts of all runs into the tidy CSVs behind each figure and table
  toy       Fig. 1's toy ensembles: MSE against the number of independent or identical members
  submodularity
            Fig. 6's test of Theorem 7 on members that are independent given the label: plug-in
            gains at several sample sizes, the exact gains and the first-order plug-in bias
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from repro.commands import add_command
from repro.pipeline.tidy import write_csv

#: The config key behind the readout's --device (named in its errors).
DEVICE_KEY = "layer_diversity.analysis_device"
#: Every readout table, and the per-figure CSV files `collect` writes from them.
READOUT_TABLES = ("units", "members", "groups", "info", "examples", "checks", "models", "duplicates")
ID_COLUMNS = ["family", "depth", "seed", "task"]


# --------------------------------------------------------------------------- data


def _data(args: argparse.Namespace) -> int:
    from repro.data.errors import DataError
    from repro.data.synthetic import generate_task, write_task
    from repro.data.synthetic.prompt_tasks import PROMPT_TASKS

    params = json.loads(args.params)
    train_sizes = json.loads(args.train_sizes)
    for flag, given in (("--params", params), ("--train-sizes", train_sizes)):
        unknown = sorted(set(given) - set(args.tasks))
        if unknown:
            print(f"error: {flag} names task(s) {unknown} that are not among --tasks {args.tasks}", file=sys.stderr)
            return 2
    unsized = [name for name in args.tasks if name not in train_sizes and args.train_size is None]
    if unsized:
        print(f"error: no train size for task(s) {unsized}: give --train-size or --train-sizes", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.tasks:
        if name not in PROMPT_TASKS:
            print(f"error: {name!r} is not a prompt task; choose from {', '.join(PROMPT_TASKS)}", file=sys.stderr)
            return 2
        try:
            train_size = train_sizes.get(name, args.train_size)
            task = generate_task(
                name, args.seed, sizes={"train": train_size, "test": args.test_size}, params=params.get(name) or None
            )
        except DataError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        write_task(out_dir / f"{name}.npz", task)
        print(f"wrote {out_dir / name}.npz: {task.meta['sizes']}")
    return 0


#: How a hub prompt row reads (repro.hub.datasets: the label word follows the answer marker).
HUB_TEMPLATE = "<bos> text [choices] Answer: label-word"


def _hub_data(args: argparse.Namespace) -> int:
    """The four tasks from the hub (or a local mirror of its files), tokenised by one family's tokenizer."""
    from dataclasses import replace

    from repro.data.errors import DataError
    from repro.data.synthetic import write_task
    from repro.hub.datasets import DATASETS, Encoder, build_task

    hub_ids = json.loads(args.hub)
    train_sizes = json.loads(args.train_sizes)
    unknown = sorted((set(hub_ids) | set(train_sizes)) - set(args.tasks))
    if unknown:
        print(
            f"error: --hub/--train-sizes name task(s) {unknown} that are not among --tasks {args.tasks}",
            file=sys.stderr,
        )
        return 2
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        encoder = Encoder.from_pretrained(args.tokenizer)
    except (OSError, ValueError) as err:
        print(f"error: cannot load the tokenizer {args.tokenizer!r}: {err}", file=sys.stderr)
        return 1
    for name in args.tasks:
        if name not in DATASETS or DATASETS[name].kind != "prompt":
            print(f"error: {name!r} is not a hub prompt task", file=sys.stderr)
            return 2
        spec = DATASETS[name]
        if name in hub_ids:  # "id" or "id:config", as the config names it
            hub_id, _, hub_config = hub_ids[name].partition(":")
            spec = replace(spec, hub_id=hub_id, config=hub_config or None)
        train_size = int(train_sizes.get(name, 0))
        splits = ["test"] + (["train"] if train_size else [])
        source = Path(args.mirror) / name if args.mirror else None
        try:
            parts = {
                split: build_task(
                    spec,
                    encoder,
                    source=source,
                    splits=[split],
                    max_len=args.max_tokens,
                    limit=args.test_size if split == "test" else train_size,
                )
                for split in splits
            }
        except DataError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        task = parts["test"]
        for split, part in parts.items():  # one limit per split: built apart, joined here
            task.splits[split] = part.splits[split]
            task.meta["sizes"][split] = part.meta["sizes"][split]
            task.meta["arrays"][split] = part.meta["arrays"][split]
        task.meta["params"].update(
            limit={s: args.test_size if s == "test" else train_size for s in splits}, tokenizer=args.tokenizer
        )
        task.meta.update(label_words=list(spec.label_names), template=HUB_TEMPLATE, tokenizer=args.tokenizer)
        write_task(out_dir / f"{name}.npz", task)
        print(f"wrote {out_dir / name}.npz: {task.meta['sizes']}")
    return 0


def load_tasks(data_dir: str | Path, names: list[str]):
    """{task name: TaskData} of the prompt tasks written by the data step."""
    from repro.data.synthetic import load_task

    return {name: load_task(Path(data_dir) / f"{name}.npz", task=name) for name in names}


# --------------------------------------------------------------------------- train


def run_dir(runs_root: str | Path, family: str, depth: int, seed: int) -> Path:
    """Where the run of one (family, depth, seed) lives."""
    return Path(runs_root) / family / f"L{depth}" / f"seed{seed}"


def multitask(tasks: dict, eval_examples: int, pad_id: int, label_weight: float):
    """One PromptLMTask over the train splits of every task; held out: the first rows of each test split."""
    from repro.training.prompt_lm import PromptLMTask, stack_prompt_rows

    train = [t.tensors("train") for t in tasks.values()]
    test = [t.tensors("test") for t in tasks.values()]
    train_ids, train_pos = stack_prompt_rows([x["input_ids"] for x in train], [x["answer_pos"] for x in train], pad_id)
    eval_ids, eval_pos = stack_prompt_rows(
        [x["input_ids"][:eval_examples] for x in test], [x["answer_pos"][:eval_examples] for x in test], pad_id
    )
    return PromptLMTask(train_ids, train_pos, eval_ids, eval_pos, pad_id=pad_id, label_weight=label_weight)


def _train(args: argparse.Namespace) -> int:
    import torch

    from repro.models import ConfigError, Transformer, config_from_dict
    from repro.runs import train_run, write_model_config
    from repro.training import TrainConfig
    from repro.training.seeding import derive_seed

    spec = json.loads(args.spec)
    if spec.get("source", "synthetic") == "hub":
        return _convert_family(spec, args)
    if spec.get("source", "synthetic") != "synthetic":
        print(f"error: unknown data source {spec['source']!r} (synthetic or hub)", file=sys.stderr)
        return 2
    tasks = load_tasks(args.data_dir, spec["tasks"])
    vocab_sizes = {t.meta["vocab_size"] for t in tasks.values()}
    pad_ids = {t.meta["pad_id"] for t in tasks.values()}
    if len(vocab_sizes) != 1 or len(pad_ids) != 1:
        print(f"error: the tasks do not share one vocabulary ({vocab_sizes}, pad {pad_ids})", file=sys.stderr)
        return 2
    task = multitask(tasks, spec["eval_examples"], pad_ids.pop(), spec["label_weight"])
    vocab_size = vocab_sizes.pop()
    torch.set_num_threads(args.threads)
    for depth in spec["depths"]:
        where = f"{spec['family']}.model (depth {depth})"
        try:
            cfg = config_from_dict(dict(spec["model"], n_layers=depth, vocab_size=vocab_size), where=where)
            train_cfg = TrainConfig(**dict(spec["train"], seed=spec["seed"], threads=args.threads))
        except (ConfigError, ValueError, TypeError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        directory = run_dir(args.runs_root, spec["family"], depth, spec["seed"])
        torch.manual_seed(derive_seed(spec["seed"], "init", spec["family"], depth))
        model = Transformer(cfg)
        write_model_config(directory, cfg)
        train_run(
            model,
            task,
            train_cfg,
            directory,
            f"{spec['family']} L={depth} seed {spec['seed']}",
            f"tasks {', '.join(spec['tasks'])}",
        )
    return 0


def _convert_family(spec: dict, args: argparse.Namespace) -> int:
    """Paper scale: the family's pretrained checkpoints (spec["hub"], one per depth, in order) as frozen
    runs in the trained runs' layout (model.json, model.safetensors, run.json); nothing is trained."""
    import torch

    from repro.hub.converters import ConversionError, from_pretrained, save_converted

    hub = list(spec.get("hub") or [])
    if len(hub) != len(spec["depths"]):
        print(
            f"error: family {spec['family']!r} lists {len(hub)} hub checkpoint(s) {hub} for depths {spec['depths']}; "
            "with data.source hub each depth is one pretrained model: give one checkpoint per depth, in order",
            file=sys.stderr,
        )
        return 2
    torch.set_num_threads(args.threads)
    tasks = load_tasks(args.data_dir, spec["tasks"])
    for checkpoint, depth in zip(hub, spec["depths"]):
        try:
            result = from_pretrained(checkpoint, task="lm", dtype="auto")
        except (ConversionError, OSError) as err:
            print(f"error: {checkpoint}: {err}", file=sys.stderr)
            return 1
        cfg = result.config
        if cfg.n_layers != depth:
            print(
                f"error: {checkpoint} has {cfg.n_layers} layers but layer_diversity.depths gives {depth} for it "
                f"(family {spec['family']!r}); at paper scale the depth is the model's own layer count",
                file=sys.stderr,
            )
            return 2
        for name, task in tasks.items():
            largest = max(int(task.tensors(split)["input_ids"].max()) for split in task.splits)
            largest = max(largest, *task.meta["label_token_ids"])
            if largest >= cfg.vocab_size:
                print(
                    f"error: {args.data_dir}/{name}.npz has token id {largest}, outside {checkpoint}'s vocabulary of "
                    f"{cfg.vocab_size}: the task was tokenised with another tokenizer",
                    file=sys.stderr,
                )
                return 2
        notes = list(result.notes)
        directory = run_dir(args.runs_root, spec["family"], depth, spec["seed"])
        save_converted(result, directory)
        record = {
            "checkpoint": checkpoint,
            "converted_from": result.source,
            "notes": notes,
            "trained": False,
            "weights_numel": sum(int(w.numel()) for w in result.state_dict.values()),
            "n_layers": cfg.n_layers,
            "family": spec["family"],
            "seed": spec["seed"],
        }
        (directory / "run.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        print(f"{spec['family']} L={depth}: {checkpoint} ({result.source}) -> {directory}", file=sys.stderr)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- readout


def _readout(args: argparse.Namespace) -> int:
    import torch

    from repro.analysis.parameter_count import analytic_parameter_count
    from repro.models import count_parameters
    from repro.papers.layer_diversity.bias_diversity import logit_margin
    from repro.papers.layer_diversity.block_duplication import duplicate_block
    from repro.papers.layer_diversity.layer_ensemble import analyse_readout, unit_table
    from repro.papers.layer_diversity.residual_stream import read_residual_stream
    from repro.runs import load_model
    from repro.training.seeding import derive_seed

    torch.set_num_threads(args.threads)
    tasks = load_tasks(args.data_dir, args.tasks)
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in READOUT_TABLES}
    for directory in args.runs:
        model = load_model(directory)
        cfg = model.cfg
        ids = {"family": args.family, "depth": cfg.n_layers, "seed": args.seed}
        tables["models"].append(
            pd.DataFrame(
                [
                    {
                        **ids,
                        "d_model": cfg.d_model,
                        "n_heads": cfg.n_heads[0],
                        "d_ff": cfg.d_ff,
                        "norm": cfg.norm,
                        "activation": cfg.activation,
                        "block": cfg.block,
                        "position": cfg.position,
                        "tied_embeddings": cfg.tie_embeddings,
                        "vocab_size": cfg.vocab_size,
                        "parameters": count_parameters(model),
                        "parameters_numel": sum(p.numel() for p in model.parameters()),
                        "parameters_formula": analytic_parameter_count(cfg),
                    }
                ]
            )
        )
        duplicated = duplicate_block(model, cfg.n_layers - 1) if cfg.n_layers in args.duplicate_depths else None
        for name, task in tasks.items():
            test = task.tensors("test")
            labels = test["labels"].numpy()
            inputs = (test["input_ids"], test["answer_pos"], task.meta["label_token_ids"])
            readout = read_residual_stream(model, *inputs, batch_size=args.batch_size, device=args.device)
            seed = derive_seed(args.seed, "independent-member", args.family, cfg.n_layers, name) % 2**32
            for table, frame in analyse_readout(readout, labels, seed=seed).items():
                tables[table].append(_with_ids(frame, ids, name))
            if duplicated is not None:
                copy_readout = read_residual_stream(duplicated, *inputs, batch_size=args.batch_size, device=args.device)
                units = unit_table(copy_readout, labels, logit_margin(copy_readout.logits, labels))
                units = units[units["target"] == "onehot"].assign(duplicated_layer=cfg.n_layers - 1)
                tables["duplicates"].append(_with_ids(units.reset_index(drop=True), ids, name))
        print(f"read {directory}: L={cfg.n_layers}", file=sys.stderr)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frames in tables.items():
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ID_COLUMNS)
        write_csv(frame, out_dir / f"{name}.csv", float_format="%.17g")
    return 0


def _with_ids(frame: pd.DataFrame, ids: dict, task: str) -> pd.DataFrame:
    """``frame`` with the run's identity (family, depth, seed) and the task as its first columns."""
    frame.insert(0, "task", task)
    for column, value in reversed(list(ids.items())):
        frame.insert(0, column, value)
    return frame


# --------------------------------------------------------------------------- collect


def stack_readouts(directories: list[str]) -> dict[str, pd.DataFrame]:
    """{table: all runs' rows}, sorted by family, depth, seed (and task)."""
    out = {}
    for name in READOUT_TABLES:
        frame = pd.concat([pd.read_csv(Path(d) / f"{name}.csv") for d in directories], ignore_index=True)
        keys = [c for c in ID_COLUMNS if c in frame.columns]
        out[name] = frame.sort_values(keys, kind="stable").reset_index(drop=True)
    return out


def correlations(units: pd.DataFrame) -> pd.DataFrame:
    """Spearman ρ of accuracy with MSE, Bias and Diversity across units, per seed, task, form and target.

    Units are the ensembles of one seed: every (family, depth, prefix ℓ ≥ 1) in the logit-lens form
    (prefix 0 is left out: the embedding's readout at the answer token, which is the same token in
    every prompt, so a constant predictor, or a function of the prompt's length with learned
    positions), or every (family, depth) in the module form; ``scope`` "all" pools the
    families, otherwise one family.
    """
    from scipy.stats import spearmanr

    units = units[(units["form"] != "lens") | (units["prefix"] > 0)]
    rows = []
    for (form, target, seed, task), group in units.groupby(["form", "target", "seed", "task"], sort=True):
        scopes = [("all", group)] + [(family, g) for family, g in group.groupby("family", sort=True)]
        for scope, frame in scopes:
            for quantity in ("mse", "bias", "diversity"):
                x, y = frame[quantity].to_numpy(), frame["accuracy"].to_numpy()
                defined = len(frame) > 2 and np.ptp(x) > 0 and np.ptp(y) > 0
                rho = float(spearmanr(x, y).statistic) if defined else np.nan
                rows.append(
                    {
                        "form": form,
                        "target": target,
                        "seed": seed,
                        "task": task,
                        "scope": scope,
                        "quantity": quantity,
                        "spearman": rho,
                        "units": len(frame),
                    }
                )
    return pd.DataFrame(rows)


def task_table(tasks: dict, stands_for: dict[str, str]) -> pd.DataFrame:
    """One row per task: labels, label words, sizes, template, generator seed and parameters, and the
    ceiling: the Bayes accuracy of the test split for a synthetic task (below 1 where its labels are noisy
    by design), 1 for hub data (human labels: no generator to compute it from); and the cue level: what a
    reader of the task's lexical artifact alone reaches (NaN where it has none, and for hub data)."""
    from repro.data.synthetic import prompt_tasks

    rows = []
    for name, task in tasks.items():
        meta = task.meta
        test = task.splits["test"]
        if "label_words" in meta:  # hub tasks (a pretrained tokenizer: no word list in the file)
            label_words = " ".join(meta["label_words"])
        else:
            label_words = " ".join(meta["vocab"]["tokens"][i] for i in meta["label_token_ids"])
        no_labels = np.zeros(0, dtype=np.int64)  # hub tasks prompted zero-shot have no train split
        synthetic = meta.get("generator") == prompt_tasks.__name__
        rows.append(
            {
                "task": name,
                "stands_for": stands_for.get(name, ""),
                "labels": len(meta["label_names"]),
                "ceiling": prompt_tasks.bayes_accuracy(name, test, meta["params"]) if synthetic else 1.0,
                "cue_level": prompt_tasks.cue_accuracy(name, test, meta["params"]) if synthetic else float("nan"),
                "label_words": label_words,
                "label_names": " ".join(meta["label_names"]),
                "train_examples": meta["sizes"].get("train", 0),
                "test_examples": meta["sizes"]["test"],
                "max_tokens": int(test["input_ids"].shape[1]),
                "template": meta.get("template", "<bos> body <ans> label-word"),
                "generator_seed": meta["seed"],
                "params": json.dumps(meta["params"], sort_keys=True),
                **{
                    f"{split}_{end}_class": int(
                        getattr(np, end)(
                            np.bincount(
                                task.splits.get(split, {}).get("labels", no_labels), minlength=len(meta["label_names"])
                            )
                        )
                    )
                    for split in ("train", "test")
                    for end in ("min", "max")
                },
                **({"tokenizer": meta["tokenizer"]} if "tokenizer" in meta else {}),
            }
        )
    return pd.DataFrame(rows)


def model_accuracy(units: pd.DataFrame) -> pd.DataFrame:
    """Each trained model's own accuracy (its last logit-lens readout, i.e. its logits) per task: Fig. 6 (i)."""
    rows = units[(units["form"] == "lens") & (units["target"] == "onehot") & (units["prefix"] == units["depth"])]
    keep = ID_COLUMNS + ["layer_accuracy", "accuracy", "bias", "diversity", "mse"]
    return (
        rows[keep]
        .rename(columns={"layer_accuracy": "accuracy", "accuracy": "prefix_ensemble_accuracy"})
        .reset_index(drop=True)
    )


def depth_fits(depth: pd.DataFrame) -> pd.DataFrame:
    """acc ≈ a + b·ln L on seed-mean accuracy, per family and task, and per family on the task mean ("all")."""
    from repro.papers.layer_diversity.depth_scaling import doubling_gains, log_depth_fit

    per_task = depth.groupby(["family", "task", "depth"], as_index=False)["accuracy"].mean()
    task_mean = per_task.groupby(["family", "depth"], as_index=False)["accuracy"].mean().assign(task="all")
    rows = []
    for (family, task), curve in pd.concat([per_task, task_mean]).groupby(["family", "task"], sort=True):
        curve = curve.sort_values("depth")
        if curve["depth"].nunique() < 2:
            continue
        a, b, r2 = log_depth_fit(curve["depth"], curve["accuracy"])
        gains = doubling_gains(dict(zip(curve["depth"].astype(int), curve["accuracy"])))
        rows.append(
            {
                "family": family,
                "task": task,
                "intercept": a,
                "slope_per_ln_depth": b,
                "r2": r2,
                "depths": len(curve),
                **{f"gain_{lo}_to_{hi}": g for (lo, hi), g in gains.items()},
            }
        )
    return pd.DataFrame(rows)


def duplication_table(units: pd.DataFrame, duplicates: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7 intervention: for each model of depth L with a duplicated last block, the original (L), the
    duplicated (L+1 layers, untrained copy) and the trained model of depth L+1, one row each.

    accuracy: the model's own; diversity: the full logit-lens prefix ensemble (one-hot target);
    module_diversity_per_m2: the module-form diversity divided by M² (M = 2L+1), comparable across depths.
    """
    columns = [
        "family",
        "base_depth",
        "seed",
        "task",
        "variant",
        "layers",
        "accuracy",
        "diversity",
        "module_diversity_per_m2",
    ]
    if "form" not in duplicates.columns:  # no model was duplicated
        return pd.DataFrame(columns=columns)
    lens = units[(units["form"] == "lens") & (units["target"] == "onehot") & (units["prefix"] == units["depth"])]
    module = units[(units["form"] == "module") & (units["target"] == "onehot")]
    rows = []
    for row in duplicates[duplicates["form"] == "lens"].itertuples():
        if row.prefix != row.depth + 1:
            continue
        dup_module = duplicates[
            (duplicates["form"] == "module")
            & (duplicates["family"] == row.family)
            & (duplicates["depth"] == row.depth)
            & (duplicates["seed"] == row.seed)
            & (duplicates["task"] == row.task)
        ]
        entries = [
            (
                "duplicated",
                row.depth + 1,
                row.layer_accuracy,
                row.diversity,
                float(dup_module["diversity"].iloc[0]) / (2 * (row.depth + 1) + 1) ** 2,
            )
        ]
        for variant, depth in (("original", row.depth), ("trained", row.depth + 1)):
            key = (
                (lens["family"] == row.family)
                & (lens["depth"] == depth)
                & (lens["seed"] == row.seed)
                & (lens["task"] == row.task)
            )
            mkey = (
                (module["family"] == row.family)
                & (module["depth"] == depth)
                & (module["seed"] == row.seed)
                & (module["task"] == row.task)
            )
            if key.any():
                entries.append(
                    (
                        variant,
                        depth,
                        float(lens.loc[key, "layer_accuracy"].iloc[0]),
                        float(lens.loc[key, "diversity"].iloc[0]),
                        float(module.loc[mkey, "diversity"].iloc[0]) / (2 * depth + 1) ** 2,
                    )
                )
        for variant, layers, accuracy, diversity, module_div in entries:
            rows.append(
                {
                    "family": row.family,
                    "base_depth": row.depth,
                    "seed": row.seed,
                    "task": row.task,
                    "variant": variant,
                    "layers": layers,
                    "accuracy": accuracy,
                    "diversity": diversity,
                    "module_diversity_per_m2": module_div,
                }
            )
    return pd.DataFrame(rows, columns=columns)


#: Quantities of Table 3 (the numbers behind Figs. 3–7 per model and task): source column -> name.
SUMMARY_QUANTITIES = {
    "accuracy": "model accuracy",
    "prefix_ensemble_accuracy": "prefix-ensemble accuracy",
    "bias": "Bias (logit lens, all layers)",
    "diversity": "Diversity (logit lens, all layers)",
    "mse": "MSE (logit lens, all layers)",
    "module_bias_per_m2": "Bias / M² (module form)",
    "module_diversity_per_m2": "Diversity / M² (module form)",
    "joint_information": "I(U_{0:L}; Y) bits",
    "it_diversity": "IT diversity bits",
    "submodularity_violation_share": "real-layer submodularity violations (share > 1e-3 bits)",
}


def summary_table(depth: pd.DataFrame, units: pd.DataFrame, info: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """Long table (family, depth, task, quantity, mean, sd, min, max, seeds) of `SUMMARY_QUANTITIES`."""
    module = units[(units["form"] == "module") & (units["target"] == "onehot")].copy()
    m2 = (2 * module["depth"] + 1) ** 2
    module = module.assign(module_bias_per_m2=module["bias"] / m2, module_diversity_per_m2=module["diversity"] / m2)
    last_info = info[info["prefix"] == info["depth"]]
    checks = checks.assign(
        submodularity_violation_share=checks["submodularity_violations_1e3"]
        / checks["submodularity_tests"].where(checks["submodularity_tests"] > 0)
    )
    wide = (
        depth.merge(module[ID_COLUMNS + ["module_bias_per_m2", "module_diversity_per_m2"]], on=ID_COLUMNS)
        .merge(last_info[ID_COLUMNS + ["joint_information", "it_diversity"]], on=ID_COLUMNS)
        .merge(checks[ID_COLUMNS + ["submodularity_violation_share"]], on=ID_COLUMNS)
    )
    long = wide.melt(id_vars=ID_COLUMNS, value_vars=list(SUMMARY_QUANTITIES), var_name="quantity")
    stats = (
        long.groupby(["family", "depth", "task", "quantity"], sort=False)["value"]
        .agg(mean="mean", sd="std", min="min", max="max", seeds="count")
        .reset_index()
    )
    stats["label"] = stats["quantity"].map(SUMMARY_QUANTITIES)
    order = {name: i for i, name in enumerate(SUMMARY_QUANTITIES)}
    return stats.sort_values(
        ["family", "depth", "task", "quantity"],
        key=lambda c: c.map(order) if c.name == "quantity" else c,
        kind="stable",
    ).reset_index(drop=True)


def _collect(args: argparse.Namespace) -> int:
    from repro.data.cards import card_path_for, read_card

    tables = stack_readouts(args.inputs)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    def write(frame: pd.DataFrame, name: str) -> None:
        write_csv(frame, out / name, float_format="%.10g")

    tasks = load_tasks(args.data_dir, args.tasks)
    task_rows = task_table(tasks, json.loads(args.stands_for))
    task_rows["sha256"] = [
        read_card(card_path_for(Path(args.data_dir) / f"{name}.npz"))["files"][f"{name}.npz"]["sha256"]
        for name in task_rows["task"]
    ]
    write(task_rows, "table01_tasks.csv")
    write(tables["models"], "table02_models.csv")
    write(tables["checks"], "fig02_reconstruction.csv")
    units = tables["units"]
    write(units, "fig03_units.csv")
    write(correlations(units), "fig03_correlations.csv")
    write(tables["members"], "fig04_members.csv")
    write(tables["groups"], "fig04_groups.csv")
    write(units[units["form"] == "lens"], "fig05_prefixes.csv")
    write(tables["examples"], "fig05_examples.csv")
    depth = model_accuracy(units)
    write(depth, "fig06_depth.csv")
    write(depth_fits(depth), "fig06_fits.csv")
    checks = tables["checks"]
    write(
        checks[ID_COLUMNS + ["submodularity_tests", "submodularity_violations_1e3", "submodularity_max_violation"]],
        "fig06_real_layers.csv",
    )
    write(tables["info"], "fig07_information.csv")
    gains = ["duplicate_gain", "duplicate_identity_residual", "independent_gain", "label_entropy_given_layers"]
    write(checks[ID_COLUMNS + gains], "fig07_gains.csv")
    write(duplication_table(units, tables["duplicates"]), "fig07_duplication.csv")
    write(summary_table(depth, units, tables["info"], checks), "table03_summary.csv")
    return 0


# --------------------------------------------------------------------------- toy (Fig. 1)


def _toy(args: argparse.Namespace) -> int:
    from repro.papers.layer_diversity.toy_ensemble import toy_curves

    try:
        frame = toy_curves(args.examples, args.classes, args.max_members, args.noise_sd, args.offset, args.seed)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_csv(frame, args.out, float_format="%.17g")
    return 0


# --------------------------------------------------------------------------- submodularity (Fig. 6)


def submodularity_table(sample_sizes: list[int], n_classes: int, flip_probs: list[float], seed: int) -> pd.DataFrame:
    """Every prefix test of F(S) = I(U_S; Y) on conditionally independent noisy copies of Y.

    One draw of max(sample_sizes) examples; each smaller size uses its first rows. Per test and size:
    the plug-in gains and violation (bits), the exact gains and violation of the true distribution, and
    the first-order plug-in bias of the violation (every cell has positive probability when 0 < p_i < 1).
    """
    from repro.papers.layer_diversity.information import (
        conditionally_independent_members,
        noisy_copies_information,
        plugin_information_bias,
        submodularity_checks,
    )

    if not all(0.0 < p < 1.0 for p in flip_probs):
        raise ValueError(f"flip probabilities must lie strictly between 0 and 1, got {flip_probs}")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=max(sample_sizes))
    members = conditionally_independent_members(labels, n_classes, flip_probs, rng)  # [N, M]

    def exact(size: int, added: int) -> float:
        return noisy_copies_information(flip_probs[:size] + [flip_probs[added]], n_classes) - noisy_copies_information(
            flip_probs[:size], n_classes
        )

    def bias(size: int, n: int) -> float:  # first-order bias of F(S ∪ {i}) − F(S), |S| = size
        def of(m: int) -> float:
            return plugin_information_bias(n_classes ** (m + 1), n_classes**m, n_classes, n) if m else 0.0

        return of(size + 1) - of(size)

    rows = []
    for n in sorted(set(sample_sizes)):
        for check in submodularity_checks(members[:n], labels[:n]):
            exact_small, exact_large = exact(check.small, check.added), exact(check.large, check.added)
            rows.append(
                {
                    "samples": n,
                    "small": check.small,
                    "large": check.large,
                    "added": check.added,
                    "gain_small": check.gain_small,
                    "gain_large": check.gain_large,
                    "violation": check.violation,
                    "exact_gain_small": exact_small,
                    "exact_gain_large": exact_large,
                    "exact_violation": exact_large - exact_small,
                    "predicted_bias": bias(check.large, n) - bias(check.small, n),
                }
            )
    return pd.DataFrame(rows)


def _submodularity(args: argparse.Namespace) -> int:
    try:
        frame = submodularity_table(args.samples, args.classes, args.flip_probs, args.seed)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    frame.insert(0, "judged", frame["samples"] == args.judged_samples)
    if not frame["judged"].any():
        print(f"error: --judged-samples {args.judged_samples} is not among --samples {args.samples}", file=sys.stderr)
        return 2
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_csv(frame, args.out, float_format="%.17g")
    return 0


# --------------------------------------------------------------------------- parser


def register(subparsers) -> None:
    from repro.analysis.device import DEVICES, device_argument

    steps = add_command(
        subparsers, "layer_diversity", "the 'Diversity of Transformer Layers' analogue", __doc__, metavar="STEP"
    )

    p = steps.add_parser("data", help="generate the four prompt tasks")
    p.add_argument("--tasks", nargs="+", required=True, help="prompt task names (sent entail topic mc)")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--train-size", type=int, default=None, help="train examples of every task not in --train-sizes")
    p.add_argument("--train-sizes", default="{}", help="JSON {task: train examples}")
    p.add_argument("--test-size", type=int, required=True)
    p.add_argument("--params", default="{}", help="JSON {task: {generator parameter: value}}")
    p.set_defaults(func=_data)

    p = steps.add_parser("hub-data", help="paper scale: the four tasks from the hub, one family's tokenizer")
    p.add_argument("--tasks", nargs="+", required=True, help="prompt task names (sent entail topic mc)")
    p.add_argument("--tokenizer", required=True, help="hub id or local directory of the family's tokenizer")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--test-size", type=int, required=True, help="first rows of each test split kept")
    p.add_argument("--train-sizes", default="{}", help="JSON {task: train rows kept} (default 0: no train split)")
    p.add_argument("--hub", default="{}", help='JSON {task: "hub id" or "hub id:config"} overriding the defaults')
    p.add_argument("--max-tokens", type=int, required=True, help="longer prompts are cut (the answer marker kept)")
    p.add_argument(
        "--mirror",
        default=None,
        help="local directory with MIRROR/<task>/<hub split>.parquet|jsonl|csv instead of the hub",
    )
    p.set_defaults(func=_hub_data)

    p = steps.add_parser("train", help="train one family at every depth for one seed")
    p.add_argument(
        "--spec",
        required=True,
        help="JSON: family, seed, depths, tasks, model, train, label_weight, eval_examples, source "
        "(+ hub: one checkpoint per depth when source is hub)",
    )
    p.add_argument("--data-dir", required=True)
    p.add_argument("--runs-root", required=True, help="runs go to RUNS_ROOT/<family>/L<depth>/seed<seed>")
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(func=_train)

    p = steps.add_parser("readout", help="bias–diversity and information tables of trained runs")
    p.add_argument("--runs", nargs="+", required=True, help="run directories of one family and seed")
    p.add_argument("--family", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--tasks", nargs="+", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--device",
        type=device_argument(DEVICE_KEY),
        default="cpu",
        help=f"where the float64 copy of each model computes: {', '.join(DEVICES)} (auto: cuda when a "
        "GPU is visible; the model itself stays on the CPU); refused before any work if unknown, "
        "or cuda without a GPU",
    )
    p.add_argument(
        "--duplicate-depths",
        type=int,
        nargs="*",
        default=[],
        help="for runs of these depths, also read the model with its last block duplicated",
    )
    p.set_defaults(func=_readout)

    p = steps.add_parser("collect", help="stack readouts into the per-figure CSVs")
    p.add_argument("--inputs", nargs="+", required=True, help="readout directories")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--tasks", nargs="+", required=True)
    p.add_argument("--stands-for", default="{}", help="JSON {task: the paper's dataset it stands for}")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=_collect)

    p = steps.add_parser("toy", help="Fig. 1's toy ensembles: MSE against the number of members")
    p.add_argument("--examples", type=int, required=True)
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--max-members", type=int, required=True)
    p.add_argument("--noise-sd", type=float, required=True)
    p.add_argument("--offset", type=float, required=True, help="the shared error δ on every coordinate")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_toy)

    p = steps.add_parser("submodularity", help="Theorem 7 on members independent given the label")
    p.add_argument("--samples", type=int, nargs="+", required=True, help="sample sizes N (nested draws)")
    p.add_argument("--judged-samples", type=int, required=True, help="the N whose tests the claim judges")
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--flip-probs", type=float, nargs="+", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_submodularity)
