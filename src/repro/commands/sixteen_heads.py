"""`python -m repro sixteen_heads STEP ...`: the runs and analyses of "Are Sixteen Heads Really Better than One?".

Steps (each writes one run directory or one tidy CSV; see workflow/rules/sixteen_heads.smk):
  train    train a classifier (family cls) or a translator (family s2s) on a synthetic task file
  ablate   baseline, single-head ablation on every test set, keep-one-head on the test and selection sets
  prune    head importance on training data, then global pruning curves by importance, by the
           oracle order (single-ablation Δ on the test set) and by random orders
  epochs   pruning during training (Fig. 5): importance and the importance-order pruning curve of
           each kept snapshot of a run
  speed    inference speed (Table 4): the unpruned classifier and a copy with the least important
           heads removed physically, timed interleaved at several batch sizes
  gather   concatenate per-run CSVs into one table per kind (ablation, importance, pruning, epochs)
Specs are JSON objects written by the rules from config[sixteen_heads].
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("sixteen_heads", help="runs and analyses of Michel et al. (2019)",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")

    p = steps.add_parser("train", help="train one model on a synthetic task")
    p.add_argument("--task-file", required=True, help=".npz from `repro data synthetic`")
    p.add_argument("--spec", required=True, help="JSON: {family, model, train, label_smoothing?}")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(func=_train)

    for name, func, text in (("ablate", _ablate, "single-head and keep-one-head sweeps"),
                             ("prune", _prune, "head importance and pruning curves")):
        p = steps.add_parser(name, help=text)
        p.add_argument("--run-dir", required=True)
        p.add_argument("--task-file", required=True)
        p.add_argument("--spec", required=True, help="JSON: {task, seed, data_seed, selection, analysis, label_smoothing}")
        p.add_argument("--threads", type=int, default=1)
        if name == "ablate":
            p.add_argument("--out", required=True, help="ablation CSV")
        else:
            p.add_argument("--ablation", help="ablation CSV of the same run (for the oracle order); none: no oracle")
            p.add_argument("--importance-out", required=True, help="importance CSV")
            p.add_argument("--out", required=True, help="pruning-curve CSV")
        p.set_defaults(func=func)

    p = steps.add_parser("epochs", help="importance and pruning curves of a run's snapshots (Fig. 5)")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--task-file", required=True)
    p.add_argument("--spec", required=True, help="JSON: the analysis spec plus {epochs: {epoch: step}}")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True, help="CSV: one row per (epoch, pruning level)")
    p.set_defaults(func=_epochs)

    p = steps.add_parser("speed", help="inference speed, unpruned vs physically pruned (Table 4)")
    p.add_argument("--run-dir", required=True, help="a classifier run (family cls)")
    p.add_argument("--task-file", required=True)
    p.add_argument("--importance", required=True, help="importance CSV of the same run (its seed's rows are used)")
    p.add_argument("--spec", required=True,
                   help="JSON: {seed, prune_percent, batch_sizes, examples, rounds, warmup}")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True, help="timings CSV (one row per batch size, model and round)")
    p.add_argument("--facts-out", required=True, help="CSV: parameters, attention weights and accuracies per model")
    p.set_defaults(func=_speed)

    p = steps.add_parser("gather", help="concatenate per-run CSVs into one table per kind")
    p.add_argument("--inputs", nargs="+", required=True, help="per-run CSVs named <run>_<kind>.csv")
    p.add_argument("--out-dir", required=True, help="writes <kind>.csv here for every kind among the inputs")
    p.set_defaults(func=_gather)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _train(args: argparse.Namespace) -> int:
    import torch

    from repro import synthetic_runs as runs
    from repro.data.errors import DataError
    from repro.data.synthetic import load_task
    from repro.models import ConfigError, count_parameters
    from repro.training import TrainConfig, train
    from repro.training.seeding import derive_seed

    spec = json.loads(args.spec)
    try:
        task = load_task(args.task_file)
        family = spec["family"]
        configs = runs.model_configs(family, spec["model"], task)
        runs.check_lengths(family, configs, task)
        train_cfg = TrainConfig(**dict(spec["train"], threads=args.threads))
    except (DataError, ConfigError, ValueError, TypeError, KeyError) as err:
        return _fail(str(err))
    eval_split = next((s for s in ("selection", "valid", "test") if s in task.splits), None)
    if eval_split is None:
        return _fail(f"task {task.name} has no selection, valid or test split to evaluate on")
    train_task = runs.make_task(family, task, eval_split, label_smoothing=float(spec.get("label_smoothing", 0.0)),
                                pad_id=int(task.meta["pad_id"]))
    torch.set_num_threads(args.threads)
    torch.manual_seed(derive_seed(train_cfg.seed, "init"))
    sep_id = runs.separator_id(task) if family == "cls" else None
    model = runs.build_model(family, configs, sep_id)
    runs.write_run_model(args.run_dir, family, configs, sep_id)
    print(f"{task.name} ({family}) seed {train_cfg.seed}: {count_parameters(model):,} parameters, "
          f"{task.meta['sizes']['train']:,} training examples, eval on {eval_split}", file=sys.stderr)
    result = train(model, train_task, train_cfg, args.run_dir, move_stale=True)  # settings changed: old run moved aside
    print(f"done: {result}", file=sys.stderr)
    return 0


# -- shared by ablate and prune -------------------------------------------------------------

# Pruning levels and rounding per family (catalog §1 and §4.6): BERT 0-100% with ⌊N·p/100⌋,
# fairseq 0-90% with ⌈N·p/100⌉.
PRUNE_PERCENTS = {"cls": list(range(0, 101, 10)), "s2s": list(range(0, 91, 10))}
PRUNE_ROUNDING = {"cls": "floor", "s2s": "ceil"}


def _setup(args: argparse.Namespace):
    """(spec, task, family, model, evaluator, set sources) of an analysis step."""
    import torch

    from repro import synthetic_runs as runs
    from repro.analysis.head_eval import make_evaluator
    from repro.data.synthetic import load_task

    torch.set_num_threads(args.threads)
    spec = json.loads(args.spec)
    task = load_task(args.task_file, spec["task"])
    family, model = runs.load_run_model(args.run_dir)
    analysis = spec["analysis"]
    sets, sources = evaluation_sets(task, family, spec["selection"], analysis["selection_examples"], spec["data_seed"])
    kwargs = _evaluator_kwargs(task, family, analysis, spec)
    return spec, task, family, model, make_evaluator(model, sets, **kwargs), sources


def _evaluator_kwargs(task, family: str, analysis: dict, spec: dict) -> dict:
    kwargs = dict(batch_size=analysis["eval_batch_size"], bootstrap_resamples=analysis["bootstrap_resamples"],
                  bootstrap_seed=spec["data_seed"], pad_id=int(task.meta["pad_id"]))
    if family == "s2s":
        tokens = task.meta["vocab"]["tokens"]
        kwargs.update(bos_id=tokens.index("<bos>"), eos_id=tokens.index("<eos>"),
                      extra_tokens=analysis["decode_extra_tokens"])
    else:
        kwargs.update(metric=task.meta["metric"])
    return kwargs


def evaluation_sets(task, family: str, selection: str, selection_examples: int, data_seed: int):
    """Named evaluation sets {role: tensors} and their sources {role: text}.

    Roles: "test" (the in-domain test split), "shifted" (the task's distribution-shifted test split,
    if it has one: MNLI-mismatched / MTNT analogue) and "selection" (where Tables 5-6 choose the kept
    head: a fixed random subset of the training split when ``selection`` is "train", else the first
    ``selection_examples`` rows of that split).
    """
    import torch

    from repro.training.seeding import generator

    keys = ("input_ids", "labels") if family == "cls" else ("src", "tgt")

    def tensors(split, rows=None):
        t = task.tensors(split)
        return tuple(t[k] if rows is None else t[k][rows] for k in keys)

    sets, sources = {"test": tensors("test")}, {"test": "test"}
    shifted = task.meta.get("shifted_splits") or []
    if shifted:
        sets["shifted"], sources["shifted"] = tensors(shifted[0]), shifted[0]
    if selection == "train":
        n_train = task.meta["sizes"]["train"]
        rows = torch.randperm(n_train, generator=generator(data_seed, "head-selection-subset"))[:selection_examples]
        sets["selection"], sources["selection"] = tensors("train", rows.sort().values), f"train[{len(rows)} random]"
    else:
        if selection not in task.splits:
            raise ValueError(f"selection split {selection!r} is not in task {task.name} (splits: {sorted(task.splits)})")
        sets["selection"] = tuple(t[:selection_examples] for t in tensors(selection))
        sources["selection"] = f"{selection}[:{min(selection_examples, task.meta['sizes'][selection])}]"
    return sets, sources


def _columns(spec: dict, task, family: str) -> dict:
    return {"task": task.name, "family": family, "metric": task.meta["metric"], "seed": int(spec["seed"])}


def _write(df, path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, float_format="%.8g", lineterminator="\n")


def _ablate(args: argparse.Namespace) -> int:
    import pandas as pd

    from repro.analysis import head_sweeps as sweeps

    spec, task, family, model, evaluator, sources = _setup(args)
    names = evaluator.set_names()
    base = sweeps.baselines(evaluator, names)
    test_sets = [n for n in ("test", "shifted") if n in names]
    frames = [
        pd.DataFrame([dict(experiment="baseline", set=n, score=base[n].score, baseline=base[n].score, delta=0.0,
                           p_value=1.0, n_examples=len(base[n].stats)) for n in names]),
        sweeps.single_head_ablation(model, evaluator, test_sets, base).assign(experiment="single"),
        sweeps.keep_one_head(model, evaluator, ["test", "selection"], base)
        .rename(columns={"kept_head": "head"}).assign(experiment="keep_one"),
    ]
    df = pd.concat(frames, ignore_index=True)
    df["source"] = df["set"].map(sources)
    for column, value in reversed(list(_columns(spec, task, family).items())):
        df.insert(0, column, value)
    order = ["task", "family", "metric", "seed", "experiment", "type", "layer", "head", "set", "source",
             "score", "baseline", "delta", "p_value", "n_examples"]
    _write(df[order], args.out)
    print(f"wrote {args.out}: {len(df)} rows; baselines "
          + ", ".join(f"{n}={base[n].score:.2f}" for n in names), file=sys.stderr)
    return 0


def _importance(model, family: str, task, spec: dict):
    """(raw, normalised, real tokens) head importance of ``model`` on a fixed subset of the training
    data (the paper uses all of it), in eval mode, with the family's training loss."""
    import torch

    from repro import synthetic_runs as runs
    from repro.analysis import head_importance as imp
    from repro.training.seeding import generator

    analysis = spec["analysis"]
    pad_id = int(task.meta["pad_id"])
    n_train = task.meta["sizes"]["train"]
    rows = torch.randperm(n_train, generator=generator(spec["data_seed"], "head-importance-subset"))
    rows = rows[: analysis["importance_examples"]].sort().values
    train = task.tensors("train")
    batches = runs.ordered_batches(family, {k: v[rows] for k, v in train.items()}, analysis["eval_batch_size"], pad_id)
    loss_fn = (imp.classification_loss_sum if family == "cls"
               else imp.translation_loss_sum(float(spec.get("label_smoothing", 0.0)), pad_id))
    raw, tokens = imp.head_importance(model, batches, loss_fn)
    return raw, imp.normalize_by_layer(raw), tokens


def importance_curves(model, evaluator, normalised, family: str, per_type: bool, base=None):
    """Pruning curves on the test set by layer-normalised importance: globally over every head
    (scope "all") and, with ``per_type``, within each attention type alone with the others whole
    (Fig. 4; the scope is the type). Columns of `head_sweeps.pruning_curve` plus scope, percent, n_heads."""
    import pandas as pd

    from repro.analysis import head_importance as imp
    from repro.analysis import head_sweeps as sweeps

    order = sweeps.order_by_score(imp.importance_by_head(model, normalised), ascending=True)
    base = base if base is not None else evaluator.evaluate(None, "test")
    percents = PRUNE_PERCENTS[family]
    scopes = {"all": order}
    if per_type:
        for kind in dict.fromkeys(head[0] for head in order):
            scopes[kind] = [head for head in order if head[0] == kind]
    frames = []
    for scope, heads in scopes.items():
        counts = sweeps.pruning_counts(len(heads), percents, PRUNE_ROUNDING[family])
        curve = sweeps.pruning_curve(model, evaluator, heads, counts, "test", base)
        frames.append(curve.assign(scope=scope, percent=percents, n_heads=len(heads)))
    return pd.concat(frames, ignore_index=True)


def _prune(args: argparse.Namespace) -> int:
    import pandas as pd

    from repro.analysis import head_sweeps as sweeps
    from repro.analysis import heads as H
    from repro.training.seeding import derive_seed

    spec, task, family, model, evaluator, _ = _setup(args)
    analysis = spec["analysis"]
    main = bool(spec.get("main", True))  # the Fig. 6 tasks get the importance curve only
    raw, normalised, tokens = _importance(model, family, task, spec)
    columns = _columns(spec, task, family)
    importance_rows = [
        dict(columns, type=kind, layer=layer, head=head, importance_raw=float(raw[kind][layer, head]),
             importance=float(normalised[kind][layer, head]), tokens=tokens[kind])
        for kind, layer, head in H.all_heads(model)
    ]
    _write(pd.DataFrame(importance_rows), args.importance_out)

    heads = H.all_heads(model)
    base = evaluator.evaluate(None, "test")
    frames = [importance_curves(model, evaluator, normalised, family, per_type=main and family == "s2s", base=base)
              .assign(order="importance", order_seed=-1)]
    orders = {}
    if args.ablation:
        ablation = pd.read_csv(args.ablation)
        single = ablation[(ablation["experiment"] == "single") & (ablation["set"] == "test")]
        delta = {(r.type, int(r.layer), int(r.head)): float(r.delta) for r in single.itertuples()}
        missing = [h for h in heads if h not in delta]
        if missing:
            return _fail(f"{args.ablation} lacks the single-head test Δ of {len(missing)} heads, e.g. {missing[0]}")
        orders[("oracle", -1)] = sweeps.order_by_score(delta, ascending=False)  # least harmful first
    for k in range(analysis["random_orders"] if main else 0):
        orders[("random", k)] = sweeps.random_order(heads, derive_seed(int(spec["seed"]), "random-prune-order", k))
    percents = PRUNE_PERCENTS[family]
    counts = sweeps.pruning_counts(len(heads), percents, PRUNE_ROUNDING[family])
    for (name, order_seed), order in orders.items():
        curve = sweeps.pruning_curve(model, evaluator, order, counts, "test", base)
        frames.append(curve.assign(order=name, order_seed=order_seed, scope="all", percent=percents,
                                   n_heads=len(heads)))
    df = pd.concat(frames, ignore_index=True)
    for column, value in reversed(list(columns.items())):
        df.insert(0, column, value)
    order = ["task", "family", "metric", "seed", "scope", "order", "order_seed", "percent", "n_pruned", "n_heads",
             "set", "score", "baseline", "delta"]
    _write(df[order], args.out)
    print(f"wrote {args.importance_out} and {args.out}: {len(df)} curve points", file=sys.stderr)
    return 0


def _epochs(args: argparse.Namespace) -> int:
    """Fig. 5: for each kept snapshot, importance on that checkpoint and its pruning curve."""
    import pandas as pd

    from repro.analysis.head_eval import make_evaluator
    from repro.training import load_weights
    from repro.training.checkpoint import snapshot_path

    spec, task, family, model, _, _ = _setup(args)
    analysis = spec["analysis"]
    epochs = {int(epoch): int(step) for epoch, step in spec["epochs"].items()}
    frames = []
    for epoch, step in sorted(epochs.items()):
        path = snapshot_path(Path(args.run_dir), step)
        if not path.exists():
            return _fail(f"{path} is missing: train the run with keep_checkpoints_at including step {step} (epoch {epoch})")
        load_weights(model, path)
        model.eval()
        sets, _ = evaluation_sets(task, family, spec["selection"], analysis["selection_examples"], spec["data_seed"])
        kwargs = _evaluator_kwargs(task, family, analysis, spec)
        evaluator = make_evaluator(model, {"test": sets["test"]}, **kwargs)
        _, normalised, _ = _importance(model, family, task, spec)
        curve = importance_curves(model, evaluator, normalised, family, per_type=False)
        frames.append(curve.assign(epoch=epoch, step=step))
        print(f"epoch {epoch} (step {step}): unpruned {curve['baseline'].iloc[0]:.2f}", file=sys.stderr)
    df = pd.concat(frames, ignore_index=True)
    for column, value in reversed(list(_columns(spec, task, family).items())):
        df.insert(0, column, value)
    df["relative"] = df["score"] / df["baseline"]
    order = ["task", "family", "metric", "seed", "epoch", "step", "percent", "n_pruned", "n_heads", "set",
             "score", "baseline", "delta", "relative"]
    _write(df[order], args.out)
    print(f"wrote {args.out}: {len(epochs)} epochs", file=sys.stderr)
    return 0


def _speed(args: argparse.Namespace) -> int:
    """Table 4: prune the least important heads physically and time both models."""
    import pandas as pd
    import torch

    from repro import synthetic_runs as runs
    from repro.analysis import head_sweeps as sweeps
    from repro.analysis import heads as H
    from repro.analysis import pruned_speed as speed
    from repro.data.synthetic import load_task

    torch.set_num_threads(args.threads)
    spec = json.loads(args.spec)
    task = load_task(args.task_file)
    family, model = runs.load_run_model(args.run_dir)
    if family != "cls":
        return _fail(f"{args.run_dir} is a {family} run; the speed measurement needs a classifier (family cls)")
    importance = pd.read_csv(args.importance)
    importance = importance[importance["seed"] == int(spec["seed"])]
    scores = {(r.type, int(r.layer), int(r.head)): float(r.importance) for r in importance.itertuples()}
    heads = H.all_heads(model)
    missing = [h for h in heads if h not in scores]
    if missing:
        return _fail(f"{args.importance} has no importance for {len(missing)} heads of seed {spec['seed']}, e.g. {missing[0]}")
    order = sweeps.order_by_score({h: scores[h] for h in heads}, ascending=True)
    k = sweeps.pruning_counts(len(heads), [int(spec["prune_percent"])], "floor")[0]  # BERT's rounding
    masks = H.masks_without(model, order[:k])
    pruned = speed.pruned_copy(model, masks)
    pad_id = int(task.meta["pad_id"])
    test = task.tensors("test")
    agreement = speed.compare_masked_and_pruned(model, pruned, masks, test["input_ids"], test["labels"], pad_id)
    facts = speed.model_facts({"original": model, "pruned": pruned})
    for key, value in agreement.items():
        facts[key] = value
    facts["accuracy"] = [_accuracy(model, test, pad_id), agreement["accuracy_pruned"]]  # unpruned, pruned
    facts["prune_percent"] = [0, int(spec["prune_percent"])]
    facts["pruned_heads"] = [0, k]
    facts.insert(0, "seed", int(spec["seed"]))
    facts.insert(0, "task", task.name)
    _write(facts, args.facts_out)

    ids = test["input_ids"][: int(spec["examples"])]
    timings = speed.time_inference({"original": model, "pruned": pruned}, ids, spec["batch_sizes"],
                                   rounds=int(spec["rounds"]), warmup=int(spec["warmup"]), pad_id=pad_id)
    timings.insert(0, "threads", args.threads)
    timings.insert(0, "seq_len", ids.shape[1])
    timings.insert(0, "seed", int(spec["seed"]))
    timings.insert(0, "task", task.name)
    _write(timings, args.out)
    summary = speed.summarize_speed(timings, "original")
    print(summary.to_string(index=False), file=sys.stderr)
    return 0


def _accuracy(model, test: dict, pad_id: int) -> float:
    import torch

    with torch.no_grad():
        ids = test["input_ids"]
        logits = torch.cat([model(chunk, padding_mask=chunk != pad_id) for chunk in torch.split(ids, 500)])
    return float((logits.argmax(-1) == test["labels"]).float().mean())


def _gather(args: argparse.Namespace) -> int:
    import pandas as pd

    groups: dict[str, list[str]] = {}
    for path in args.inputs:
        kind = Path(path).stem.rsplit("_", 1)[-1]
        groups.setdefault(kind, []).append(path)
    for kind, paths in sorted(groups.items()):
        df = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)
        out = Path(args.out_dir) / f"{kind}.csv"
        _write(df, str(out))
        print(f"wrote {out}: {len(df)} rows from {len(paths)} files", file=sys.stderr)
    return 0
