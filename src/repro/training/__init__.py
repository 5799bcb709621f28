"""The one trainer: task-agnostic, seeded, resumable bit for bit, safetensors checkpoints.

    from repro.training import LanguageModelTask, TrainConfig, train
    task = LanguageModelTask(train_tokens, eval_tokens)          # [N, T] and [M, T] token ids
    result = train(model, task, TrainConfig(steps=1000, batch_size=32, lr=1e-3,
                                            warmup_fraction=0.05, weight_decay=0.1), run_dir)

Modules: config (TrainConfig), optim (AdamW weight-decay groups), schedules (LR as a
function of progress), tasks (batches and losses), checkpoint (safetensors state),
trainer (the loop, metrics.jsonl, run.json).

Its names load their module on first use (repro.lazy): reading a TrainConfig does not import torch.
"""

from repro.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "repro.training.checkpoint": ("CheckpointError", "ConfigMismatchError", "load_weights", "save_weights"),
        "repro.training.config": ("TrainConfig", "TrainConfigError"),
        "repro.training.optim": ("build_optimizer", "decay_exempt_names", "parameter_groups"),
        "repro.training.schedules": ("SCHEDULES", "build_schedule"),
        "repro.training.tasks": (
            "ClassificationTask",
            "LanguageModelTask",
            "LossOutput",
            "MaskedLMTask",
            "Seq2SeqTask",
            "Task",
            "padding_mask",
        ),
        "repro.training.trainer": ("TrainingInterrupted", "TrainResult", "evaluate", "train", "update_stepper"),
    },
)
