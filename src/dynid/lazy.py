"""Lazy package attributes (PEP 562): ``dynid.regressor`` imports the dynamics kernels (Numba)
the first time it is used, not when ``import dynid`` runs, so the CLI and light users start fast."""

from __future__ import annotations

import importlib


def lazy_attributes(package: str, where: dict[str, str]):
    """``__getattr__`` and ``__dir__`` for a package whose attribute ``name`` lives in module
    ``where[name]``; the attribute is cached in the package after its first use."""

    def __getattr__(name: str):
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(where) | set(vars(importlib.import_module(package))))

    return __getattr__, __dir__
