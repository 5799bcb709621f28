"""Synthetic tasks: labels follow their rules (recomputed here independently), balance, determinism, files."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
import torch

from repro.data import DataError
from repro.data.synthetic import TASKS, generate_task, load_task, write_task

SMALL = {  # a few hundred examples per split keeps every test well under a second
    "nli": {"train": 300, "selection": 60, "test": 60, "test_mismatched": 300},
    "sst2": {"train": 300, "selection": 60, "test": 60},
    "cola": {"train": 300, "selection": 60, "test": 60},
    "mrpc": {"train": 300, "selection": 60, "test": 60},
    "mt": {"train": 300, "selection": 50, "test": 50, "test_ood": 100},
    "iwslt": {"train": 100, "valid": 50, "test": 50},
    "sent": {"train": 300, "test": 60},
    "entail": {"train": 300, "test": 60},
    "topic": {"train": 300, "test": 60},
    "mc": {"train": 300, "test": 60},
}


@pytest.fixture(scope="module")
def tasks():
    return {name: generate_task(name, seed=7, sizes=SMALL[name]) for name in TASKS}


def names_of(task):
    return task.meta["vocab"]["tokens"]


def rows(split, key="input_ids"):
    """The unpadded rows of a CLS-family array, as lists (padding must be PAD = 0)."""
    for row, length in zip(split[key], split["lengths"]):
        assert not row[length:].any()
        yield row[:length].tolist()


# --------------------------------------------------------------------------- label rules


def test_nli_label_is_the_entailment_rule(tasks):
    task = tasks["nli"]
    name = names_of(task)
    antonym = dict(enumerate(task.meta["antonym"]))
    assert all(antonym[antonym[i]] == i and (antonym[i] != i) == name[i].startswith("w") for i in antonym)
    for split in task.splits.values():
        for ids, segments, label in zip(rows(split), rows(split, "segment_ids"), split["labels"]):
            assert name[ids[0]] == "<cls>"
            cut = segments.index(1)
            assert name[ids[cut - 1]] == "<sep>" and "<sep>" not in (name[i] for i in ids[cut:])
            premise, hypothesis = set(ids[1 : cut - 1]), ids[cut:]
            novel = [h for h in hypothesis if h not in premise]
            expected = (
                "entailment"
                if not novel
                else ("contradiction" if len(novel) == 1 and antonym[novel[0]] in premise else "neutral")
            )
            assert task.meta["label_names"][label] == expected
    lengths = task.splits["test_mismatched"]["lengths"] - task.splits["test_mismatched"]["segment_ids"].sum(1) - 2
    assert lengths.min() >= 16 and lengths.max() <= 24  # the longer, mismatched premises
    uniform = Counter(task.splits["train"]["input_ids"][:, 1:9].ravel())
    skewed = Counter(task.splits["test_mismatched"]["input_ids"][:, 1:17].ravel())
    assert max(skewed.values()) / sum(skewed.values()) > 2 * max(uniform.values()) / sum(uniform.values())


def test_nli_hard_share_mixes_easy_and_hard_examples():
    """hard_share > 0 draws that share of the in-domain examples with the hard lengths; 0 keeps the data."""
    from repro.data.synthetic.nli import generate_nli

    base = {"premise_len": [3, 6], "hypothesis_len": [1, 1]}
    easy = generate_nli(0, {"train": 600, "test": 60, "test_mismatched": 30}, base)
    mixed = generate_nli(
        0,
        {"train": 600, "test": 60, "test_mismatched": 30},
        {**base, "hard_share": 0.25, "hard_premise_len": [10, 12], "hard_hypothesis_len": [3, 3]},
    )
    split = mixed.splits["train"]
    hypothesis = split["segment_ids"].sum(1)
    premise = split["lengths"] - hypothesis - 2
    hard = hypothesis == 3
    assert 0.18 < hard.mean() < 0.32  # a quarter, drawn per example
    assert (premise[hard] >= 10).all() and (premise[~hard] <= 6).all() and (hypothesis[~hard] == 1).all()
    assert (easy.splits["train"]["segment_ids"].sum(1) == 1).all()
    shifted = mixed.splits["test_mismatched"]  # the mismatched split is not mixed
    assert (shifted["segment_ids"].sum(1) == 1).all()
    with pytest.raises(DataError, match="hard_share"):
        generate_nli(0, {"train": 10}, {"hard_share": 1.0})


def polarity_from_names(name):
    """+1 for w0..w14 / s0..s7, -1 for w15..w29 / s8..s15, as vocab.py documents."""

    def polarity(token):
        match = re.fullmatch(r"([ws])(\d+)", name[token])
        if not match:
            return 0
        index, block = int(match[2]), 15 if match[1] == "w" else 8
        return 1 if index < block else -1 if index < 2 * block else 0

    return polarity


@pytest.mark.parametrize("task_name", ["sst2", "sent"])
def test_sentiment_label_is_the_sign_of_negated_polarity(tasks, task_name):
    task = tasks[task_name]
    name = names_of(task)
    polarity = polarity_from_names(name)
    for split in task.splits.values():
        bodies = (
            rows(split)
            if task_name == "sst2"
            else (row[1:pos] for row, pos in zip(split["input_ids"].tolist(), split["answer_pos"]))
        )
        for body, label in zip(bodies, split["labels"]):
            if task_name == "sst2":
                assert name[body[0]] == "<cls>"
                body = body[1:]
            total, negate = 0, False
            for token in body:
                total += -polarity(token) if negate else polarity(token)
                negate = name[token] == "not"
            assert total != 0 and (total > 0) == (label == 1)
        assert (np.asarray(split["input_ids"]) == name.index("not")).any()


def test_cola_label_is_bracket_well_formedness(tasks):
    task = tasks["cola"]
    name = names_of(task)
    for split in task.splits.values():
        for ids, label in zip(rows(split), split["labels"]):
            text = "".join(name[i] for i in ids[1:] if name[i] in "()[]")
            while "()" in text or "[]" in text:
                text = text.replace("()", "").replace("[]", "")
            assert (text == "") == (label == 1)
        assert abs(split["labels"].mean() - 0.7) < 0.01  # 30% ill formed


def test_mrpc_label_is_multiset_equality(tasks):
    task = tasks["mrpc"]
    for split in task.splits.values():
        for ids, segments, label in zip(rows(split), rows(split, "segment_ids"), split["labels"]):
            cut = segments.index(1)
            first, second = ids[1 : cut - 1], ids[cut:]
            assert len(first) == len(second)
            assert (Counter(first) == Counter(second)) == (label == 1)
            if label == 1:
                assert first != second


def reference_translation(source, rule):
    """The MT rule written independently: regex swaps on a string of class letters, then a lookup."""
    x, y = set(rule["class_x"]), set(rule["class_y"])
    letters = "".join("x" if t in x else "y" if t in y else "z" for t in source)
    order = list(range(len(source)))
    for match in re.finditer("xy", letters):  # finditer gives the non-overlapping left-to-right pairs
        i = match.start()
        order[i], order[i + 1] = i + 1, i
    target = []
    for i in order:
        target.append(rule["lexicon"][source[i]])
        if rule["second"][source[i]]:
            target.append(rule["second"][source[i]])
    return target


@pytest.mark.parametrize("task_name", ["mt", "iwslt"])
def test_translation_targets_follow_the_rule(tasks, task_name):
    task = tasks[task_name]
    name = names_of(task)
    rule = task.meta["rule"]
    assert sorted(rule["lexicon"][3:]) == list(range(3, 63))  # a bijection of the content words
    swaps = fertile = 0
    for split in task.splits.values():
        for i in range(len(split["src"])):
            src = split["src"][i, : split["src_lengths"][i]].tolist()
            tgt = split["tgt"][i, : split["tgt_lengths"][i]].tolist()
            assert name[src[-1]] == "<eos>" and name[tgt[0]] == "<bos>" and name[tgt[-1]] == "<eos>"
            assert tgt[1:-1] == reference_translation(src[:-1], rule)
            swaps += bool(
                re.search(
                    "xy", "".join("x" if t in rule["class_x"] else "y" if t in rule["class_y"] else "z" for t in src)
                )
            )
            fertile += len(tgt) - len(src) - 1
    assert swaps > 0 and fertile > 0  # both parts of the rule are exercised
    assert generate_task("iwslt", 0, {"train": 5}).meta["rule"] == generate_task("mt", 0, {"train": 5}).meta["rule"]


def test_mt_out_of_domain_set_is_longer_and_skewed(tasks):
    split = tasks["mt"].splits["test_ood"]
    assert split["src_lengths"].min() - 1 >= 15 and split["src_lengths"].max() - 1 <= 20
    in_domain = tasks["mt"].splits["train"]["src_lengths"] - 1
    assert in_domain.min() >= 6 and in_domain.max() <= 14
    counts = np.bincount(split["src"][split["src"] > 2], minlength=63)
    assert counts.max() / counts.sum() > 3 / 60  # far from uniform


def prompt_parts(task, split):
    """(body, label) per example, checking the [BOS] body [ANS] label-word layout on the way."""
    name = names_of(task)
    words = task.meta["label_token_ids"]
    for row, pos, label in zip(split["input_ids"].tolist(), split["answer_pos"], split["labels"]):
        assert name[row[0]] == "<bos>" and name[row[pos]] == "<ans>" and row[pos + 1] == words[label]
        assert all(t == 0 for t in row[pos + 2 :]) and 0 not in row[: pos + 2]
        yield row[1:pos], label


def test_entail_label_is_subset(tasks):
    task = tasks["entail"]
    sep = names_of(task).index("<sep>")
    for split in task.splits.values():
        for body, label in prompt_parts(task, split):
            premise, hypothesis = body[: body.index(sep)], body[body.index(sep) + 1 :]
            assert len(set(premise)) == len(premise) and 2 <= len(hypothesis) <= 3
            assert set(hypothesis) <= set(premise) if label == 1 else not set(hypothesis) <= set(premise)


def test_topic_label_is_the_topic_of_its_words(tasks):
    task = tasks["topic"]
    name = names_of(task)
    for split in task.splits.values():
        for body, label in prompt_parts(task, split):
            topics = {int(m[1]) for m in (re.fullmatch(r"t(\d)_\d+", name[t]) for t in body) if m}
            assert topics == {label}
            assert all(name[t].startswith(("t", "noise")) for t in body)


def test_mc_label_is_the_option_holding_the_sum(tasks):
    task = tasks["mc"]
    name = names_of(task)
    value = {i: int(n[1:]) for i, n in enumerate(name) if re.fullmatch(r"n\d+", n)}
    for split in task.splits.values():
        for body, label in prompt_parts(task, split):
            a, b = value[body[0]], value[body[1]]
            assert [name[t] for t in body[2::2]] == ["A", "B", "C", "D"]
            options = [value[t] for t in body[3::2]]
            assert len(set(options)) == 4 and options.index((a + b) % 31) == label


def test_topic_confusion_draws_words_of_the_next_topic_only():
    from repro.data.synthetic.prompt_tasks import generate_prompt_task

    task = generate_prompt_task("topic", 0, {"train": 400, "test": 10}, {"confusion": 0.3})
    name = names_of(task)
    own = other = 0
    for body, label in prompt_parts(task, task.splits["train"]):
        topics = [int(m[1]) for m in (re.fullmatch(r"t(\d)_\d+", name[t]) for t in body) if m]
        assert set(topics) <= {label, (label + 1) % 4}
        own, other = own + topics.count(label), other + topics.count((label + 1) % 4)
    assert 0.25 < other / (own + other) < 0.35


def test_bayes_accuracy_is_the_full_posterior_argmax():
    """TOPIC's Bayes accuracy equals the argmax of the posterior built from every factor of the generator
    (noise words, Zipf ranks included), so the factors the function drops do cancel; the rule tasks are 1."""
    from repro.data.synthetic.prompt_tasks import (
        TOPIC_NOISE_WORDS,
        TOPIC_VOCABULARIES,
        TOPIC_ZIPF,
        bayes_accuracy,
        generate_prompt_task,
    )

    params = {"length": [4, 10], "noise_prob": 0.6, "confusion": 0.3}
    task = generate_prompt_task("topic", 3, {"train": 4, "test": 600}, params)
    split = task.splits["test"]
    credit = []
    for row, pos, label in zip(split["input_ids"], split["answer_pos"], split["labels"]):
        likelihood = np.ones(4)
        for word in row[1:pos]:
            for y in range(4):
                p = 0.6 / len(TOPIC_NOISE_WORDS) if word in TOPIC_NOISE_WORDS else 0.0
                for k, share in ((y, 0.7), ((y + 1) % 4, 0.3)):
                    hits = np.flatnonzero(TOPIC_VOCABULARIES[k] == word)
                    p += 0.4 * share * (TOPIC_ZIPF[hits[0]] if len(hits) else 0.0)
                likelihood[y] *= p
        best = np.isclose(likelihood, likelihood.max(), rtol=1e-9, atol=0.0)
        credit.append(best[label] / best.sum())
    assert bayes_accuracy("topic", split, task.meta["params"]) == pytest.approx(np.mean(credit), abs=1e-12)
    assert 0.85 < np.mean(credit) < 0.95  # noisy by design: below 1, far above chance
    clean = generate_prompt_task("topic", 3, {"train": 4, "test": 200}, {})
    # exact: confusion 0 makes every log-posterior 0 or -inf, one best label per row: a mean of ones
    assert bayes_accuracy("topic", clean.splits["test"], clean.meta["params"]) == 1.0
    for name in ("sent", "entail", "mc"):
        other = generate_prompt_task(name, 0, {"train": 4, "test": 8}, {})
        assert bayes_accuracy(name, other.splits["test"], other.meta["params"]) == 1.0  # exact: the constant 1.0
    with pytest.raises(DataError, match="unknown prompt task"):
        bayes_accuracy("nope", split, {})


def test_topic_negation_moves_a_words_evidence_to_the_previous_topic():
    """With not_prob, TOPIC writes some topic words as ``not`` + a word of the next topic. The Bayes
    accuracy equals the argmax of the full generative likelihood (every factor, marks included), a bag of
    words that ignores the marks falls well short of it (so reading the previous token pays), and
    not_prob 0 leaves the rows of before unchanged."""
    from repro.data.synthetic.prompt_tasks import (
        NOT,
        TOPIC_NOISE_WORDS,
        TOPIC_OF,
        TOPIC_VOCABULARIES,
        TOPIC_ZIPF,
        bayes_accuracy,
        generate_prompt_task,
    )

    noise, confusion, not_prob = 0.6, 0.3, 0.4
    params = {"length": [3, 7], "noise_prob": noise, "confusion": confusion, "not_prob": not_prob}
    task = generate_prompt_task("topic", 5, {"train": 4, "test": 800}, params)
    split = task.splits["test"]

    def share(topic: int, y: int) -> float:
        return {y: 1 - confusion, (y + 1) % 4: confusion}.get(topic, 0.0)

    def zipf(word: int) -> float:
        return TOPIC_ZIPF[np.flatnonzero(TOPIC_VOCABULARIES[TOPIC_OF[word]] == word)[0]]

    credit, bag_credit, marked, words = [], [], 0, 0
    for row, pos, label in zip(split["input_ids"], split["answer_pos"], split["labels"]):
        body = list(row[1:pos])
        likelihood, bag = np.ones(4), np.zeros(4)
        i = 0
        while i < len(body):
            word = body[i]
            if word == NOT:  # a negated word: evidence for the topic before its own
                word = body[i + 1]
                assert TOPIC_OF[word] >= 0
                for y in range(4):
                    likelihood[y] *= (1 - noise) * not_prob * share((TOPIC_OF[word] - 1) % 4, y) * zipf(word)
                marked, i = marked + 1, i + 2
            elif word in TOPIC_NOISE_WORDS:
                likelihood *= noise / len(TOPIC_NOISE_WORDS)
                i += 1
            else:
                for y in range(4):
                    likelihood[y] *= (1 - noise) * (1 - not_prob) * share(TOPIC_OF[word], y) * zipf(word)
                i += 1
            words += TOPIC_OF[word] >= 0
            if TOPIC_OF[word] >= 0:
                bag[TOPIC_OF[word]] += 1
        best = np.isclose(likelihood, likelihood.max(), rtol=1e-9, atol=0.0)
        credit.append(best[label] / best.sum())
        top = bag == bag.max()
        bag_credit.append(top[label] / top.sum())
    assert bayes_accuracy("topic", split, task.meta["params"]) == pytest.approx(np.mean(credit), abs=1e-12)
    assert 0.3 < marked / words < 0.5
    assert np.mean(bag_credit) < np.mean(credit) - 0.15
    plain = {"length": [4, 10], "noise_prob": 0.6, "confusion": 0.3}
    before = generate_prompt_task("topic", 3, {"train": 4, "test": 50}, plain)
    after = generate_prompt_task("topic", 3, {"train": 4, "test": 50}, {**plain, "not_prob": 0.0})
    np.testing.assert_array_equal(before.splits["test"]["input_ids"], after.splits["test"]["input_ids"])


def test_mc_modulus_sets_the_numbers_and_bad_values_are_refused():
    from repro.data.errors import DataError
    from repro.data.synthetic.prompt_tasks import generate_prompt_task

    task = generate_prompt_task("mc", 0, {"train": 200, "test": 10}, {"modulus": 5})
    name = names_of(task)
    value = {i: int(n[1:]) for i, n in enumerate(name) if re.fullmatch(r"n\d+", n)}
    for body, label in prompt_parts(task, task.splits["train"]):
        a, b, options = value[body[0]], value[body[1]], [value[t] for t in body[3::2]]
        assert max(a, b, *options) < 5 and options.index((a + b) % 5) == label
    for bad in ({"modulus": 3}, {"modulus": 32}):
        with pytest.raises(DataError, match="modulus"):
            generate_prompt_task("mc", 0, {"train": 10, "test": 10}, bad)
    with pytest.raises(DataError, match="confusion"):
        generate_prompt_task("topic", 0, {"train": 10, "test": 10}, {"confusion": 1.0})


def test_lexical_cues_keep_the_label_rule_and_a_bag_of_words_reads_them_part_of_the_way():
    """ENTAIL's cue words appear only in NO hypotheses and MC's far options are numbers no answer takes:
    the label is still the subset rule and the sum, a reader of the cue alone lands between chance and 1
    (`cue_accuracy` equals that reader counted by hand), and cue_prob 0 / far_prob 0 leave the rows of
    before unchanged."""
    from repro.data.errors import DataError
    from repro.data.synthetic.prompt_tasks import (
        ENTAIL_CUE_WORDS,
        NUMBERS,
        SEP,
        V,
        cue_accuracy,
        generate_prompt_task,
    )

    cue = set(V.group("entail")[-ENTAIL_CUE_WORDS:].tolist())
    task = generate_prompt_task("entail", 4, {"train": 4, "test": 1000}, {"cue_prob": 0.5})
    bag = []
    for body, label in prompt_parts(task, task.splits["test"]):
        premise, hypothesis = body[: body.index(SEP)], body[body.index(SEP) + 1 :]
        assert not cue & set(premise)
        assert set(hypothesis) <= set(premise) if label == 1 else not set(hypothesis) <= set(premise)
        bag.append(label == (0 if cue & set(hypothesis) else 1))
    assert 0.7 < np.mean(bag) < 0.9
    assert cue_accuracy("entail", task.splits["test"], task.meta["params"]) == pytest.approx(np.mean(bag), abs=1e-12)

    value = {int(token): i for i, token in enumerate(NUMBERS)}
    task = generate_prompt_task("mc", 4, {"train": 4, "test": 1000}, {"modulus": 16, "far_prob": 0.7})
    ruled_out = []
    for body, label in prompt_parts(task, task.splits["test"]):
        a, b, options = value[body[0]], value[body[1]], [value[t] for t in body[3::2]]
        assert options.index((a + b) % 16) == label and len(set(options)) == 4
        near = [i for i, o in enumerate(options) if o < 16]
        ruled_out.append((label in near) / len(near))
    assert 0.55 < np.mean(ruled_out) < 0.7  # E[1 / (1 + Binomial(3, 0.3))] = 0.63
    assert cue_accuracy("mc", task.splits["test"], task.meta["params"]) == pytest.approx(np.mean(ruled_out), abs=1e-12)

    for name, params in (("entail", {"cue_prob": 0.0}), ("mc", {"far_prob": 0.0})):
        before = generate_prompt_task(name, 3, {"train": 4, "test": 50}, {})
        after = generate_prompt_task(name, 3, {"train": 4, "test": 50}, params)
        np.testing.assert_array_equal(before.splits["test"]["input_ids"], after.splits["test"]["input_ids"])
        assert np.isnan(cue_accuracy(name, after.splits["test"], after.meta["params"]))  # no artifact, no level
    with pytest.raises(DataError, match="far_prob > 0 needs"):
        generate_prompt_task("mc", 0, {"train": 10, "test": 10}, {"far_prob": 0.5})


# --------------------------------------------------------------------------- common properties


@pytest.mark.parametrize("task_name", [t for t in TASKS if t not in ("mt", "iwslt", "cola", "mrpc")])
def test_labels_are_balanced(tasks, task_name):
    task = tasks[task_name]
    for split in task.splits.values():
        counts = np.bincount(split["labels"], minlength=len(task.meta["label_names"]))
        assert counts.max() - counts.min() <= 1


@pytest.mark.parametrize("task_name", list(TASKS))
def test_determinism_and_seed_dependence(tasks, task_name):
    sizes = {split: min(n, 40) for split, n in SMALL[task_name].items()}
    a = generate_task(task_name, 7, sizes)
    b = generate_task(task_name, 7, sizes)
    c = generate_task(task_name, 8, sizes)
    for split in a.splits:
        for key in a.splits[split]:
            np.testing.assert_array_equal(a.splits[split][key], b.splits[split][key])
        main = "src" if "src" in a.splits[split] else "input_ids"
        assert not np.array_equal(a.splits[split][main], c.splits[split][main])
    assert a.meta == b.meta  # exact: the same generator run twice on one machine, params copied
    # a split's examples do not depend on the size of another split
    other = dict(sizes, train=sizes["train"] + 5)
    d = generate_task(task_name, 7, other)
    test_split = [s for s in sizes if s != "train"][0]
    for key in a.splits[test_split]:
        np.testing.assert_array_equal(a.splits[test_split][key], d.splits[test_split][key])


@pytest.mark.parametrize("task_name", list(TASKS))
def test_ids_fit_the_family_vocabulary(tasks, task_name):
    task = tasks[task_name]
    vocab_size = task.meta["vocab_size"]
    assert vocab_size == len(names_of(task)) and names_of(task)[0] == "<pad>"
    for split in task.splits.values():
        for key, values in split.items():
            assert values.dtype == np.int64 and len(values) == len(next(iter(split.values())))
            if key in ("input_ids", "src", "tgt"):
                assert 0 <= values.min() and values.max() < vocab_size


def test_write_load_round_trip_and_identical_cards(tasks, tmp_path):
    task = tasks["nli"]
    card = write_task(tmp_path / "a" / "nli.npz", task)
    write_task(tmp_path / "b" / "nli.npz", generate_task("nli", 7, SMALL["nli"]))
    for name in ("nli.npz", "nli.card.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert card["sizes"]["test_mismatched"]["examples"] == 300 and card["vocab_size"] == 69
    loaded = load_task(tmp_path / "a" / "nli.npz", task="nli")
    assert loaded.meta == task.meta  # exact: a JSON round trip (floats written by repr read back exactly)
    tensors = loaded.tensors("train")
    assert (
        tensors["input_ids"].dtype == torch.long
        and tensors["input_ids"].shape == task.splits["train"]["input_ids"].shape
    )
    with pytest.raises(DataError, match="no split"):
        loaded.tensors("dev")


def test_loader_rejects_missing_corrupt_and_mismatched_files(tasks, tmp_path):
    from repro.data.npz import read_npz, write_npz

    path = tmp_path / "sst2.npz"
    write_task(path, tasks["sst2"])
    with pytest.raises(DataError, match="holds task 'sst2', expected 'nli'"):
        load_task(path, task="nli")
    with pytest.raises(DataError, match="not found"):
        load_task(tmp_path / "none.npz")
    arrays, meta = read_npz(path)
    del arrays["test/labels"]
    write_npz(tmp_path / "missing_key.npz", arrays, meta)
    with pytest.raises(DataError, match=r"missing \['test/labels'\]"):
        load_task(tmp_path / "missing_key.npz")
    arrays, meta = read_npz(path)
    arrays["train/input_ids"] = arrays["train/input_ids"][:-1]
    write_npz(tmp_path / "short.npz", arrays, meta)
    with pytest.raises(DataError, match="rows"):
        load_task(tmp_path / "short.npz")
    arrays, meta = read_npz(path)
    write_npz(tmp_path / "no_meta.npz", arrays)
    with pytest.raises(DataError, match="not a synthetic task file"):
        load_task(tmp_path / "no_meta.npz")
    (tmp_path / "junk.npz").write_bytes(path.read_bytes()[:1000])
    with pytest.raises(DataError, match="corrupt"):
        load_task(tmp_path / "junk.npz")


def test_bad_sizes_and_params_are_clear_errors():
    with pytest.raises(DataError, match="unknown synthetic task"):
        generate_task("glue", 0)
    with pytest.raises(DataError, match="no split 'dev'"):
        generate_task("sst2", 0, {"dev": 10})
    with pytest.raises(DataError, match="no parameter"):
        generate_task("sst2", 0, {"train": 10}, {"colour": 1})
    with pytest.raises(DataError, match="inclusive range"):
        generate_task("sst2", 0, {"train": 10}, {"length": [9, 3]})
    task = generate_task("mt", 0, {"train": 10, "selection": 0, "test": 0, "test_ood": 0})
    assert list(task.splits) == ["train"]
