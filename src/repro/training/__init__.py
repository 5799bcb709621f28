"""The one trainer: task-agnostic, seeded, resumable bit for bit, safetensors checkpoints.

    from repro.training import LanguageModelTask, TrainConfig, train
    task = LanguageModelTask(train_tokens, eval_tokens)          # [N, T] and [M, T] token ids
    result = train(model, task, TrainConfig(steps=1000, batch_size=32, lr=1e-3,
                                            warmup_fraction=0.05, weight_decay=0.1), run_dir)

Modules: config (TrainConfig), optim (AdamW weight-decay groups), schedules (LR as a
function of progress), tasks (batches and losses), checkpoint (safetensors state),
trainer (the loop, metrics.jsonl, run.json).
"""

from repro.training.checkpoint import CheckpointError, ConfigMismatchError, load_weights, save_weights
from repro.training.config import TrainConfig, TrainConfigError
from repro.training.optim import build_optimizer, decay_exempt_names, parameter_groups
from repro.training.schedules import SCHEDULES, build_schedule
from repro.training.tasks import (
    ClassificationTask,
    LanguageModelTask,
    LossOutput,
    MaskedLMTask,
    Seq2SeqTask,
    Task,
    padding_mask,
)
from repro.training.trainer import TrainingInterrupted, TrainResult, evaluate, train

__all__ = [
    "SCHEDULES",
    "CheckpointError",
    "ClassificationTask",
    "ConfigMismatchError",
    "LanguageModelTask",
    "LossOutput",
    "MaskedLMTask",
    "Seq2SeqTask",
    "Task",
    "TrainConfig",
    "TrainConfigError",
    "TrainResult",
    "TrainingInterrupted",
    "build_optimizer",
    "build_schedule",
    "decay_exempt_names",
    "evaluate",
    "load_weights",
    "padding_mask",
    "parameter_groups",
    "save_weights",
    "train",
]
