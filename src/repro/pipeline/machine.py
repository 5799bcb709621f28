"""What the machine that ran a job is, as far as its numbers depend on it.

Trained results differ between CPUs for the same code and seeds (the float kernels sum in other
orders, and torch picks its kernels by the vector instructions the CPU has), so lineage cards and
dossiers name the CPU model and its widest vector extension beside the platform. Read from
/proc/cpuinfo, without importing torch; "unknown" where that file does not exist.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

#: Vector extensions torch's CPU kernels dispatch on, widest first.
VECTOR_EXTENSIONS = ("avx512f", "avx2", "avx", "sse4_2")


def describe(cpuinfo: str | Path = "/proc/cpuinfo") -> dict[str, str | int]:
    """platform, architecture, logical cores, CPU model name and its widest vector extension."""
    model, flags = "unknown", set()
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and model == "unknown":
            model = value.strip()
        elif key.strip() in ("flags", "Features") and not flags:
            flags = set(value.split())
    vector = next((ext for ext in VECTOR_EXTENSIONS if ext in flags), "unknown" if not flags else "none")
    return {
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cores": os.cpu_count() or 0,
        "cpu": model,
        "vector": vector,
    }


def summary(machine: dict[str, str | int]) -> str:
    """One line for a dossier: 'AMD EPYC (avx512f), 2 logical cores, Linux-...'."""
    return f"{machine['cpu']} ({machine['vector']}), {machine['cores']} logical cores, {machine['platform']}"
