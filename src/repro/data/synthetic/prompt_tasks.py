"""The four prompt-form tasks of layer_diversity.md §4 (SENT, ENTAIL, TOPIC, MC), PROMPT vocabulary.

Each example is ``[BOS] body [ANS] label-word``; a causal model is read at the ANS position against
the task's K single-token label words (see common.prompt_arrays for the arrays). Classes are
balanced in every split.
  SENT   (SST-2-like, K=2: NEG POS)  the polarity rule of sentiment.py on the "sent" pool
         (8 positive, 8 negative, 14 neutral words) plus ``not``.
  ENTAIL (RTE-like, K=2: NO YES)     a premise of 6-10 distinct "entail" words, SEP, a hypothesis
         of 2-3 distinct words; YES iff every hypothesis word is in the premise. A NO hypothesis
         has 1 or 2 of its words (at random) replaced by words absent from the premise. With
         probability cue_prob (0: none) a replacement is one of 6 "cue" words that no premise then
         uses: a hypothesis-only artifact like RTE's, which a bag of words reads (one layer gets part
         of the way) while the label stays the subset rule.
  TOPIC  (AG-News-like, K=4: T0..T3) each word is, with probability noise_prob (0.4), a uniform
         shared noise word, else a Zipf(1.2) draw from a topic's 10 words: the next topic's
         ((k + 1) mod K) with probability confusion (0: none), else the example's own; at least
         one topic word. The topic vocabularies are disjoint; with confusion > 0 the label is the
         topic whose words dominate, and a few words can mislead (the Bayes accuracy is below 1).
         With probability not_prob (0: none) a topic word is written as ``not`` and a word of the
         topic after the one it stands for: "not <topic k+1>" is evidence for topic k, so reading it
         needs the previous token, as SENT's negation does (one layer gets part of the way).
  MC     (ARC-like, K=4: A B C D)    ``a b A x_A B x_B C x_C D x_D`` with numbers mod p
         (modulus, at most 31); the answer is the option whose number equals (a + b) mod p; the
         other three are distinct wrong numbers. Hard for a small model at p = 31 (the catalog's
         "no gain" case). With probability far_prob (0: none) a wrong option is a number in
         [p, 31), which no answer takes: options a reader can rule out without the arithmetic.
"""

from __future__ import annotations

import numpy as np

from repro.data.errors import DataError
from repro.data.synthetic.common import (
    TaskKind,
    balanced_labels,
    check_range,
    draw_examples,
    prompt_arrays,
    resolve_params,
    resolve_sizes,
    sample_length,
    zipf_probabilities,
)
from repro.data.synthetic.sentiment import PolarityLexicon, sample_polar_sentence
from repro.data.synthetic.vocab import MC_MODULUS, PROMPT_VOCAB, TOPIC_NOISE, TOPIC_WORDS, TOPICS

V = PROMPT_VOCAB
BOS, SEP, ANS = V.id("<bos>"), V.id("<sep>"), V.id("<ans>")
DEFAULT_SIZES = {"train": 8000, "test": 2000}

SENT_LEXICON = PolarityLexicon(V.group("sent"), 8, 8, V.id("not"), V.size)
SENT_POLARITY = SENT_LEXICON.polarity_table()
TOPIC_VOCABULARIES = V.group("topic")[: TOPICS * TOPIC_WORDS].reshape(TOPICS, TOPIC_WORDS)  # [K, 10]
TOPIC_NOISE_WORDS = V.group("topic")[TOPICS * TOPIC_WORDS :]  # [16]
assert len(TOPIC_NOISE_WORDS) == TOPIC_NOISE
TOPIC_ZIPF = zipf_probabilities(TOPIC_WORDS, 1.2)  # within a topic, word i has weight 1/(i+1)^1.2
TOPIC_OF = np.full(V.size, -1, dtype=np.int64)  # TOPIC_OF[token]: its topic, -1 for every other token
TOPIC_OF[TOPIC_VOCABULARIES.ravel()] = np.repeat(np.arange(TOPICS), TOPIC_WORDS)
NOT = V.id("not")
NUMBERS = V.group("numbers")  # NUMBERS[i] is the token of the number i
ENTAIL_CUE_WORDS = 6  # with cue_prob > 0, the last 6 entail words appear only in NO hypotheses


def _sent(rng, label, params):
    return sample_polar_sentence(rng, SENT_LEXICON, SENT_POLARITY, label, params["length"], params["not_prob"])


def _entail(rng, label, params):
    pool = V.group("entail")
    cue = params["cue_prob"] > 0  # tested before any draw, so cue_prob 0 keeps the data of before
    premise_pool = pool[:-ENTAIL_CUE_WORDS] if cue else pool
    premise = rng.choice(premise_pool, size=sample_length(rng, params["premise_len"]), replace=False)
    hypothesis = rng.choice(premise, size=sample_length(rng, params["hypothesis_len"]), replace=False)
    if label == 0:
        absent = np.setdiff1d(premise_pool, premise)
        n_new = int(rng.integers(1, min(2, len(hypothesis)) + 1))
        positions = rng.choice(len(hypothesis), size=n_new, replace=False)
        hypothesis[positions] = rng.choice(absent, size=n_new, replace=False)
        if cue:  # each new word is, with probability cue_prob, a word no premise uses
            swap = positions[rng.random(n_new) < params["cue_prob"]]
            hypothesis[swap] = rng.choice(pool[-ENTAIL_CUE_WORDS:], size=len(swap), replace=False)
    return [*premise.tolist(), SEP, *hypothesis.tolist()]


def _topic(rng, label, params):
    length = sample_length(rng, params["length"])
    noise = rng.random(length) < params["noise_prob"]
    if noise.all():
        return None  # nothing says the topic; draw again
    words = rng.choice(TOPIC_VOCABULARIES[label], size=length, p=TOPIC_ZIPF)
    if params["confusion"] > 0:  # drawn only when used, so confusion 0 keeps the data of before
        other = rng.random(length) < params["confusion"]
        words[other] = rng.choice(TOPIC_VOCABULARIES[(label + 1) % TOPICS], size=int(other.sum()), p=TOPIC_ZIPF)
    words[noise] = rng.choice(TOPIC_NOISE_WORDS, size=int(noise.sum()))
    if params["not_prob"] == 0:  # drawn only when used, so not_prob 0 keeps the data of before
        return words.tolist()
    # a negated word is drawn again from the next topic's vocabulary, with the same Zipf rank law
    negated = ~noise & (rng.random(length) < params["not_prob"])
    body = []
    for word, neg in zip(words.tolist(), negated):
        if neg:
            topic = int(TOPIC_OF[word])
            body += [NOT, int(rng.choice(TOPIC_VOCABULARIES[(topic + 1) % TOPICS], p=TOPIC_ZIPF))]
        else:
            body.append(word)
    return body


def _mc(rng, label, params):
    modulus = params["modulus"]
    a, b = rng.integers(modulus, size=2)
    answer = (a + b) % modulus
    wrong = rng.choice(np.setdiff1d(np.arange(modulus), [answer]), size=3, replace=False)
    if params["far_prob"] > 0:  # drawn only when used, so far_prob 0 keeps the data of before
        far = rng.random(3) < params["far_prob"]  # a number (a + b) mod modulus never takes
        wrong[far] = rng.choice(np.arange(modulus, len(NUMBERS)), size=int(far.sum()), replace=False)
    options = np.insert(wrong, label, answer)
    body = [NUMBERS[a], NUMBERS[b]]
    for letter, value in zip(V.group("mc_labels"), options):
        body += [letter, NUMBERS[value]]
    return [int(t) for t in body]


# task -> (body sampler, label-word group, label names, default params, metric)
PROMPT_TASKS = {
    "sent": (_sent, "sent_labels", ("negative", "positive"), {"length": (8, 20), "not_prob": 0.15}),
    "entail": (
        _entail,
        "entail_labels",
        ("no", "yes"),
        {"premise_len": (6, 10), "hypothesis_len": (2, 3), "cue_prob": 0.0},
    ),
    "topic": (
        _topic,
        "topic_labels",
        tuple(f"topic{k}" for k in range(TOPICS)),
        {"length": (8, 20), "noise_prob": 0.4, "confusion": 0.0, "not_prob": 0.0},
    ),
    "mc": (_mc, "mc_labels", ("A", "B", "C", "D"), {"modulus": MC_MODULUS, "far_prob": 0.0}),
}


def generate_prompt_task(task: str, seed: int, sizes: dict | None = None, params: dict | None = None):
    """Generate one prompt task; input_ids [N, T], answer_pos [N], labels [N] per split."""
    sample, label_group, label_names, default_params = PROMPT_TASKS[task]
    sizes = resolve_sizes(task, DEFAULT_SIZES, sizes)
    params = resolve_params(task, default_params, params)
    for name, value in params.items():
        if name.endswith("len") or name == "length":
            check_range(task, name, value, 1)
    for name in ("noise_prob", "confusion", "not_prob", "cue_prob", "far_prob"):
        if name in params and not 0 <= params[name] < 1:
            raise DataError(f"{task}: {name}={params[name]!r} must be in [0, 1)")
    if "modulus" in params and not (isinstance(params["modulus"], int) and 4 <= params["modulus"] <= MC_MODULUS):
        raise DataError(
            f"{task}: modulus={params['modulus']!r} must be an integer in [4, {MC_MODULUS}] (4 distinct options)"
        )
    if params.get("far_prob", 0) > 0 and params["modulus"] > len(NUMBERS) - 3:
        raise DataError(
            f"{task}: far_prob > 0 needs 3 numbers no answer takes, so modulus <= {len(NUMBERS) - 3}; "
            f"got modulus={params['modulus']}"
        )
    label_token_ids = V.group(label_group)

    def make_split(rng, split, n):
        labels = balanced_labels(rng, n, len(label_names))
        return prompt_arrays(draw_examples(labels, lambda y: sample(rng, y, params)), labels, label_token_ids, BOS, ANS)

    kind = TaskKind(task, __name__, V, metric="accuracy", label_names=label_names)
    return kind.build(seed, sizes, params, make_split, extra={"label_token_ids": label_token_ids.tolist()})


def generate_sent(seed: int, sizes: dict | None = None, params: dict | None = None):
    return generate_prompt_task("sent", seed, sizes, params)


def generate_entail(seed: int, sizes: dict | None = None, params: dict | None = None):
    return generate_prompt_task("entail", seed, sizes, params)


def generate_topic(seed: int, sizes: dict | None = None, params: dict | None = None):
    return generate_prompt_task("topic", seed, sizes, params)


def generate_mc(seed: int, sizes: dict | None = None, params: dict | None = None):
    return generate_prompt_task("mc", seed, sizes, params)


def cue_accuracy(task: str, split: dict, params: dict) -> float:
    """The accuracy on one split of a reader of the task's lexical artifact alone, the level a model reaches
    without the rule behind the label; NaN where the task has none (cue_prob / far_prob 0, SENT, TOPIC).
    ENTAIL: NO where the hypothesis holds a cue word, else YES (without a cue YES is the likelier label).
    MC: one of the options in the answers' range [0, modulus) at random, the far ones ruled out."""
    if task not in PROMPT_TASKS:
        raise DataError(f"unknown prompt task {task!r}; choose one of {', '.join(PROMPT_TASKS)}")
    params = resolve_params(task, PROMPT_TASKS[task][3], params)
    ids, answer_pos, labels = (np.asarray(split[key]) for key in ("input_ids", "answer_pos", "labels"))
    if task == "entail" and params["cue_prob"] > 0:
        after_sep = np.cumsum(ids == SEP, axis=1) > 0
        hypothesis = after_sep & (np.arange(ids.shape[1]) < answer_pos[:, None])
        cued = (hypothesis & np.isin(ids, V.group("entail")[-ENTAIL_CUE_WORDS:])).any(axis=1)
        return float((np.where(cued, 0, 1) == labels).mean())
    if task == "mc" and params["far_prob"] > 0:
        options = ids[:, 4:11:2] - NUMBERS[0]  # [BOS] a b A x_A B x_B ...: the numbers of A-D
        near = options < params["modulus"]
        return float((near[np.arange(len(labels)), labels] / near.sum(axis=1)).mean())
    return float("nan")


def bayes_accuracy(task: str, split: dict, params: dict) -> float:
    """The accuracy of the Bayes-optimal classifier on one split of a prompt task: the ceiling a model can
    reach there. SENT, ENTAIL and MC label every body by a rule (1.0). TOPIC's words are noisy draws, so a
    body can point to the wrong topic: its posterior over labels (uniform prior) is the product over topic
    words of (1 − confusion)·[word of topic y] + confusion·[word of topic y + 1], where a word after ``not``
    counts for the topic before its own; noise words, the Zipf rank, the length and the share of negated
    words are the same under every label and cancel. Ties count 1/(tied labels)."""
    if task != "topic":
        if task not in PROMPT_TASKS:
            raise DataError(f"unknown prompt task {task!r}; choose one of {', '.join(PROMPT_TASKS)}")
        return 1.0
    confusion = float(resolve_params(task, PROMPT_TASKS[task][3], params)["confusion"])
    ids, answer_pos, labels = (np.asarray(split[key]) for key in ("input_ids", "answer_pos", "labels"))
    # counts[n, k]: words in row n's body (between BOS and ANS) that count for topic k
    body = (np.arange(ids.shape[1]) >= 1) & (np.arange(ids.shape[1]) < answer_pos[:, None])
    negated = np.zeros_like(body)
    negated[:, 1:] = ids[:, :-1] == NOT
    topics = np.where(negated, (TOPIC_OF[ids] - 1) % TOPICS, TOPIC_OF[ids])
    topics = np.where(body & (TOPIC_OF[ids] >= 0), topics, -1)
    counts = np.stack([(topics == k).sum(axis=1) for k in range(TOPICS)], axis=1)
    # log P(body | y) up to terms shared by every y: Σ_k counts[k] · log P(topic-k word | y)
    own = np.log1p(-confusion)
    other = np.log(confusion) if confusion > 0 else -np.inf
    word_given = np.full((TOPICS, TOPICS), -np.inf)  # [y, k]
    for y in range(TOPICS):
        word_given[y, y] = own
        word_given[y, (y + 1) % TOPICS] = other
    with np.errstate(invalid="ignore"):
        terms = np.where(counts[:, None, :] > 0, counts[:, None, :] * word_given[None], 0.0)  # [n, y, k]
    log_post = terms.sum(axis=2)
    best = log_post == log_post.max(axis=1, keepdims=True)
    return float((best[np.arange(len(labels)), labels] / best.sum(axis=1)).mean())
