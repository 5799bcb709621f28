"""Package namespaces whose names load their module on first use (PEP 562).

A package ``__init__`` that re-exports its modules' names would import them all, torch
included, whenever any one module of the package is imported; the Snakefile reads configs
through such modules and must not pay for torch. With :func:`lazy_exports` the package lists
where each name lives and imports a module only when one of its names is asked for::

    __getattr__, __dir__, __all__ = lazy_exports(__name__, {"repro.models.config": ("TransformerConfig",)})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(
    package: str, homes: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """The module-level ``__getattr__``, ``__dir__`` and ``__all__`` of ``package``."""
    module_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        if name not in module_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module_of[name]), name)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *module_of})

    return __getattr__, __dir__, sorted(module_of)
