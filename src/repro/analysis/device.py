"""Where an analysis step runs: its device setting (auto, cpu, cuda) and the device of a model.

A paper section's ``analysis_device`` key reaches an analysis command as ``--device``; the command
moves its model there, and the analyses move every batch to the device of the model they are given
(`model_device`) and bring their results back to the CPU. "auto" is resolved by the trainer's own
`repro.training.config.resolve_device` (cuda when a GPU is visible, else cpu). torch is imported
when a setting is resolved, not with this module: command parsers import it when they are built.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

#: The device settings an analysis step accepts.
DEVICES = ("auto", "cpu", "cuda")


class DeviceError(ValueError):
    """A device setting that is unknown, or names a GPU that is not there; the message names the config key."""


def analysis_device(name: str, key: str) -> torch.device:
    """The torch device of the setting ``name`` of config key ``key`` (e.g. "sixteen_heads.analysis_device").

    Refuses a name outside DEVICES, and "cuda" when no GPU is visible, so a step fails before it
    loads anything.
    """
    import torch

    from repro.training.config import resolve_device

    if name not in DEVICES:
        raise DeviceError(f"config key {key} (--device) is {name!r}; allowed values: {', '.join(DEVICES)}")
    device = resolve_device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(
            f"config key {key} (--device) is 'cuda' but no GPU is visible to torch "
            f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'no'}); "
            "use 'auto' to fall back to the CPU"
        )
    return device


def device_argument(key: str):
    """An argparse ``type=`` for ``--device``: the resolved torch device, or a usage error naming ``key``."""

    def parse(name: str) -> torch.device:
        try:
            return analysis_device(name, key)
        except DeviceError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    parse.__name__ = "device"  # argparse names the type in its messages
    return parse


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of ``model``'s parameters (cpu for a model without any)."""
    import torch

    first = next(model.parameters(), None)
    return first.device if first is not None else torch.device("cpu")


__all__ = ["DEVICES", "DeviceError", "analysis_device", "device_argument", "model_device"]
