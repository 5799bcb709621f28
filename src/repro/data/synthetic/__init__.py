"""Seeded synthetic tasks for the sixteen-heads and layer-diversity analogues.

Families and tasks (vocabularies in vocab.py):
  CLS    nli, sst2, cola, mrpc      [CLS] ... classification (sixteen_heads.md §3)
  S2S    mt, iwslt                  source -> target translation (sixteen_heads.md §3)
  PROMPT sent, entail, topic, mc    [BOS] body [ANS] label-word (layer_diversity.md §4)

``generate_task(name, seed, sizes, params)`` is a pure function of its arguments; ``write_task`` /
``load_task`` store a task as one .npz plus a data card.
"""

from __future__ import annotations

from collections.abc import Callable

from repro.data.errors import DataError
from repro.data.synthetic.common import TaskData
from repro.data.synthetic.dyck import generate_cola
from repro.data.synthetic.nli import generate_nli
from repro.data.synthetic.paraphrase import generate_mrpc
from repro.data.synthetic.prompt_tasks import generate_entail, generate_mc, generate_sent, generate_topic
from repro.data.synthetic.sentiment import generate_sst2
from repro.data.synthetic.storage import load_task, write_task
from repro.data.synthetic.translation import generate_iwslt, generate_mt
from repro.data.synthetic.vocab import CLS_VOCAB, PROMPT_VOCAB, S2S_VOCAB, Vocabulary

TASKS: dict[str, Callable[..., TaskData]] = {
    "nli": generate_nli,
    "sst2": generate_sst2,
    "cola": generate_cola,
    "mrpc": generate_mrpc,
    "mt": generate_mt,
    "iwslt": generate_iwslt,
    "sent": generate_sent,
    "entail": generate_entail,
    "topic": generate_topic,
    "mc": generate_mc,
}


def generate_task(name: str, seed: int, sizes: dict | None = None, params: dict | None = None) -> TaskData:
    """Generate task ``name``; ``sizes`` maps split -> examples (0 drops a split), ``params`` overrides defaults."""
    try:
        generate = TASKS[name]
    except KeyError:
        raise DataError(f"unknown synthetic task {name!r}; known tasks: {', '.join(TASKS)}") from None
    return generate(seed, sizes, params)


__all__ = [
    "CLS_VOCAB",
    "PROMPT_VOCAB",
    "S2S_VOCAB",
    "TASKS",
    "TaskData",
    "Vocabulary",
    "generate_task",
    "load_task",
    "write_task",
]
