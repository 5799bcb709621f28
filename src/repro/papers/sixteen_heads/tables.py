"""The tables sixteen_heads' analyses write, one function each, from a trained model and its evaluator:
the ablation table (baselines, single-head ablation, keep-one-head), head importance, and the pruning
curves by importance, by the oracle order and by random orders. The commands load the run, call these
and write the CSVs; the evaluation sets and the family's pruning levels are fixed here.
"""

from __future__ import annotations

import pandas as pd

from repro.analysis import head_importance as imp
from repro.analysis import head_pruning as pruning
from repro.analysis import heads as H
from repro.papers.sixteen_heads import head_sweeps as sweeps
from repro.papers.sixteen_heads import runs
from repro.training.seeding import derive_seed, generator

# Pruning levels and rounding per family (catalog §1 and §4.6): BERT 0-100% with ⌊N·p/100⌋,
# fairseq 0-90% with ⌈N·p/100⌉.
PRUNE_PERCENTS = {"cls": list(range(0, 101, 10)), "s2s": list(range(0, 91, 10))}
PRUNE_ROUNDING = {"cls": "floor", "s2s": "ceil"}

#: The measured columns of a pruning curve, after the table's own keys.
CURVE_COLUMNS = ["percent", "n_pruned", "n_heads", "set", "score", "baseline", "delta"]
ABLATION_COLUMNS = [
    "experiment",
    "type",
    "layer",
    "head",
    "set",
    "source",
    "score",
    "baseline",
    "delta",
    "p_value",
    "n_examples",
    "loss",
    "delta_loss",
]


def run_keys(spec: dict, task, family: str) -> dict:
    """The key columns of every table of one run: task, family, metric, seed."""
    return {"task": task.name, "family": family, "metric": task.meta["metric"], "seed": int(spec["seed"])}


def keyed(df: pd.DataFrame, keys: dict, columns: list[str]) -> pd.DataFrame:
    """`df` with the run's key columns first, then `columns` in that order."""
    return df.assign(**keys)[[*keys, *columns]]


def evaluator_kwargs(task, family: str, analysis: dict, spec: dict) -> dict:
    """The settings of repro.papers.sixteen_heads.head_eval.make_evaluator for this task and family."""
    kwargs = dict(
        batch_size=analysis["eval_batch_size"],
        bootstrap_resamples=analysis["bootstrap_resamples"],
        bootstrap_seed=spec["data_seed"],
        pad_id=int(task.meta["pad_id"]),
    )
    if family == "s2s":
        kwargs.update(
            bos_id=runs.special_id(task, "bos"),
            eos_id=runs.special_id(task, "eos"),
            extra_tokens=analysis["decode_extra_tokens"],
            sweep_batch_rows=analysis["sweep_batch_rows"],
        )
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
            raise ValueError(
                f"selection split {selection!r} is not in task {task.name} (splits: {sorted(task.splits)})"
            )
        sets["selection"] = tuple(t[:selection_examples] for t in tensors(selection))
        sources["selection"] = f"{selection}[:{min(selection_examples, task.meta['sizes'][selection])}]"
    return sets, sources


def ablation_table(model, evaluator, sources: dict) -> tuple[pd.DataFrame, dict]:
    """(ABLATION_COLUMNS rows, baselines by set): the unmasked model on every set, each head removed
    alone on the test sets, and each layer reduced to one head on the test and selection sets."""
    names = evaluator.set_names()
    base = sweeps.baselines(evaluator, names)
    test_sets = [n for n in ("test", "shifted") if n in names]
    baseline_rows = [
        dict(
            experiment="baseline",
            set=n,
            score=base[n].score,
            baseline=base[n].score,
            delta=0.0,
            p_value=1.0,
            n_examples=len(base[n].stats),
            loss=base[n].loss,
            delta_loss=0.0,
        )
        for n in names
    ]
    frames = [
        pd.DataFrame(baseline_rows),
        sweeps.single_head_ablation(model, evaluator, test_sets, base).assign(experiment="single"),
        sweeps.keep_one_head(model, evaluator, ["test", "selection"], base)
        .rename(columns={"kept_head": "head"})
        .assign(experiment="keep_one"),
    ]
    df = pd.concat(frames, ignore_index=True)
    df["source"] = df["set"].map(sources)
    return df[ABLATION_COLUMNS], base


def head_importance(model, family: str, task, spec: dict):
    """(raw, normalised, real tokens) head importance of ``model`` on a fixed subset of the training
    data (the paper uses all of it), in eval mode, with the family's training loss."""
    import torch

    analysis = spec["analysis"]
    pad_id = int(task.meta["pad_id"])
    n_train = task.meta["sizes"]["train"]
    rows = torch.randperm(n_train, generator=generator(spec["data_seed"], "head-importance-subset"))
    rows = rows[: analysis["importance_examples"]].sort().values
    train = task.tensors("train")
    batches = runs.ordered_batches(family, {k: v[rows] for k, v in train.items()}, analysis["eval_batch_size"], pad_id)
    loss_fn = (
        imp.classification_loss_sum
        if family == "cls"
        else imp.translation_loss_sum(float(spec.get("label_smoothing", 0.0)), pad_id)
    )
    raw, tokens = imp.head_importance(model, batches, loss_fn)
    return raw, imp.normalize_by_layer(raw), tokens


def importance_table(model, raw, normalised, tokens, keys: dict) -> pd.DataFrame:
    """One row per head: its raw and layer-normalised importance and the tokens they were summed over."""
    return pd.DataFrame(
        [
            dict(
                keys,
                type=kind,
                layer=layer,
                head=head,
                importance_raw=float(raw[kind][layer, head]),
                importance=float(normalised[kind][layer, head]),
                tokens=tokens[kind],
            )
            for kind, layer, head in H.all_heads(model)
        ]
    )


def importance_curves(model, evaluator, normalised, family: str, per_type: bool, base=None) -> pd.DataFrame:
    """Pruning curves on the test set by layer-normalised importance: globally over every head
    (scope "all") and, with ``per_type``, within each attention type alone with the others whole
    (Fig. 4; the scope is the type). Columns of `head_sweeps.pruning_curve` plus scope, percent, n_heads."""
    order = pruning.order_by_score(imp.importance_by_head(model, normalised), ascending=True)
    base = base if base is not None else evaluator.evaluate(None, "test")
    percents = PRUNE_PERCENTS[family]
    scopes = {"all": order}
    if per_type:
        for kind in dict.fromkeys(head[0] for head in order):
            scopes[kind] = [head for head in order if head[0] == kind]
    frames = []
    for scope, heads in scopes.items():
        counts = pruning.pruning_counts(len(heads), percents, PRUNE_ROUNDING[family])
        curve = sweeps.pruning_curve(model, evaluator, heads, counts, "test", base)
        frames.append(curve.assign(scope=scope, percent=percents, n_heads=len(heads)))
    return pd.concat(frames, ignore_index=True)


def oracle_order(ablation: pd.DataFrame, heads: list) -> list:
    """The heads least harmful first by their single-head test Δ (ties by the smaller loss increase),
    from an ablation table; ValueError naming what is missing when it cannot give every head's Δ."""
    single = ablation[(ablation["experiment"] == "single") & (ablation["set"] == "test")]
    if "delta_loss" not in single:
        raise ValueError("it has no delta_loss column (written by an older version); rerun its ablate step")
    delta = {(r.type, int(r.layer), int(r.head)): float(r.delta) for r in single.itertuples()}
    delta_loss = {(r.type, int(r.layer), int(r.head)): float(r.delta_loss) for r in single.itertuples()}
    missing = [h for h in heads if h not in delta]
    if missing:
        raise ValueError(f"it lacks the single-head test Δ of {len(missing)} heads, e.g. {missing[0]}")
    return pruning.order_by_score(delta, ascending=False, tiebreak=delta_loss)


def pruning_table(
    model, evaluator, normalised, family: str, seed: int, *, main: bool, random_orders: int, oracle=None
) -> pd.DataFrame:
    """Pruning curves on the test set: by importance (per attention type too, for a main translation
    run), by the oracle order if given, and by `random_orders` random orders (main runs only)."""
    heads = H.all_heads(model)
    base = evaluator.evaluate(None, "test")
    per_type = main and family == "s2s"
    frames = [
        importance_curves(model, evaluator, normalised, family, per_type=per_type, base=base).assign(
            order="importance", order_seed=-1
        )
    ]
    orders = {} if oracle is None else {("oracle", -1): oracle}
    for k in range(random_orders if main else 0):
        orders[("random", k)] = pruning.random_order(heads, derive_seed(seed, "random-prune-order", k))
    percents = PRUNE_PERCENTS[family]
    counts = pruning.pruning_counts(len(heads), percents, PRUNE_ROUNDING[family])
    for (name, order_seed), order in orders.items():
        curve = sweeps.pruning_curve(model, evaluator, order, counts, "test", base)
        frames.append(
            curve.assign(order=name, order_seed=order_seed, scope="all", percent=percents, n_heads=len(heads))
        )
    return pd.concat(frames, ignore_index=True)[["scope", "order", "order_seed", *CURVE_COLUMNS]]
