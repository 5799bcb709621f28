"""The trainer's device setting at paper scale: "auto" picks a GPU when one is visible."""

from __future__ import annotations

import pytest
import torch

from repro.training import TrainConfig
from repro.training.config import TrainConfigError, resolve_device
from repro.training.trainer import evaluate


def test_auto_resolves_to_cuda_only_when_a_gpu_is_visible():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("cpu") == torch.device("cpu")


def test_train_config_accepts_auto_and_still_rejects_unknown_devices():
    assert TrainConfig(steps=1, batch_size=1, lr=1e-3, device="auto").device == "auto"
    with pytest.raises(TrainConfigError, match="device"):
        TrainConfig(steps=1, batch_size=1, lr=1e-3, device="gpu7")


def test_evaluate_takes_auto():
    class OneBatch:
        def eval_batches(self):
            yield {"x": torch.ones(2)}

        def loss(self, model, batch):
            from repro.training.tasks import LossOutput

            return LossOutput(loss=model(batch["x"]).sum(), n_tokens=2, n_targets=2)

    model = torch.nn.Linear(2, 1, bias=False)
    torch.nn.init.ones_(model.weight)
    # one batch of two targets with summed loss w·x = 2: the mean over targets weights it by 2, /2
    assert evaluate(model.to(resolve_device("auto")), OneBatch(), "auto") == pytest.approx(2.0)
