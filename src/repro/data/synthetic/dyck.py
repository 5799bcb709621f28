"""CoLA analogue: is a two-bracket Dyck word with filler tokens well formed? (sixteen heads, Fig. 6; MCC)

A well-formed sentence is a balanced, properly nested sequence of ``( )`` and ``[ ]`` pairs with
content words (fillers) inserted anywhere. An ill-formed one (a fixed fraction, 30% by default)
is a well-formed one after a single edit of a bracket: replace a bracket by a different bracket,
delete a bracket, or insert a bracket. Any such edit breaks well-formedness (it changes the
bracket count's parity or balance, or mismatches a pair); the generator still checks each result.
Label 1 = well formed (acceptable), 0 = ill formed. Input ``[CLS] sentence``.
"""

from __future__ import annotations

from collections.abc import Sequence

from repro.data.synthetic.common import (
    TaskKind,
    check_range,
    labelled_split,
    quota_labels,
    resolve_params,
    resolve_sizes,
    sample_length,
)
from repro.data.synthetic.vocab import CLS_VOCAB

TASK = "cola"
LABEL_NAMES = ("unacceptable", "acceptable")
KIND = TaskKind(TASK, __name__, CLS_VOCAB, metric="mcc", label_names=LABEL_NAMES)
DEFAULT_SIZES = {"train": 20000, "selection": 2000, "test": 2000}
DEFAULT_PARAMS = {"pairs": (2, 8), "fillers": (0, 10), "ill_formed_fraction": 0.3}

OPENERS = (CLS_VOCAB.id("("), CLS_VOCAB.id("["))
CLOSER_OF = {CLS_VOCAB.id("("): CLS_VOCAB.id(")"), CLS_VOCAB.id("["): CLS_VOCAB.id("]")}
BRACKETS = (*OPENERS, *CLOSER_OF.values())


def is_well_formed(tokens: Sequence[int]) -> bool:
    """True if the brackets in ``tokens`` are balanced and properly nested (fillers ignored)."""
    stack = []
    for token in tokens:
        if token in CLOSER_OF:
            stack.append(CLOSER_OF[token])
        elif token in BRACKETS and (not stack or stack.pop() != token):
            return False
    return not stack


def random_dyck(rng, n_pairs: int) -> list[int]:
    """A random properly nested word of ``n_pairs`` bracket pairs, each of a random type."""
    out, stack, opens_left = [], [], n_pairs
    while opens_left or stack:
        if opens_left and (not stack or rng.random() < 0.5):
            opener = OPENERS[rng.integers(2)]
            out.append(opener)
            stack.append(CLOSER_OF[opener])
            opens_left -= 1
        else:
            out.append(stack.pop())
    return out


def insert_fillers(rng, brackets: list[int], n_fillers: int) -> list[int]:
    out = list(brackets)
    for word in rng.choice(CLS_VOCAB.group("content"), size=n_fillers):
        out.insert(int(rng.integers(len(out) + 1)), int(word))
    return out


def single_bracket_edit(rng, tokens: list[int]) -> list[int]:
    """Replace, delete or insert one bracket (the three edits equally likely)."""
    out = list(tokens)
    positions = [i for i, t in enumerate(out) if t in BRACKETS]
    edit = rng.integers(3)
    if edit == 0:
        i = positions[rng.integers(len(positions))]
        out[i] = int(rng.choice([b for b in BRACKETS if b != out[i]]))
    elif edit == 1:
        del out[positions[rng.integers(len(positions))]]
    else:
        out.insert(int(rng.integers(len(out) + 1)), int(rng.choice(BRACKETS)))
    return out


def _make_example(rng, label: int, pairs, fillers):
    sentence = insert_fillers(rng, random_dyck(rng, sample_length(rng, pairs)), sample_length(rng, fillers))
    if label == 0:
        sentence = single_bracket_edit(rng, sentence)
        if is_well_formed(sentence):
            return None  # cannot happen with the three edits above; kept as a guard
    return sentence


def generate_cola(seed: int, sizes: dict | None = None, params: dict | None = None):
    """Generate the CoLA analogue; input_ids, lengths, labels per split."""
    sizes = resolve_sizes(TASK, DEFAULT_SIZES, sizes)
    params = resolve_params(TASK, DEFAULT_PARAMS, params)
    check_range(TASK, "pairs", params["pairs"], 1)
    check_range(TASK, "fillers", params["fillers"], 0)
    ill = float(params["ill_formed_fraction"])
    cls_id = CLS_VOCAB.id("<cls>")

    def make_split(rng, split, n):
        labels = quota_labels(rng, n, [ill, 1.0 - ill])
        return labelled_split(
            labels, lambda y: _make_example(rng, y, params["pairs"], params["fillers"]), cls_id=cls_id
        )

    return KIND.build(seed, sizes, params, make_split)
