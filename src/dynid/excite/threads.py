"""Moved to ``dynid.identify.threads`` (the lowest room that uses it); this name stays for
code written against it."""

from dynid.identify.threads import single_blas_thread

__all__ = ["single_blas_thread"]
