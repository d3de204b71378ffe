"""Error types. Every message names the file, field or column and what was expected; ``refuse_repeated``
phrases the one for a list option naming one thing twice (used by every room)."""


class DynidError(ValueError):
    """Base class of the errors a user can cause; the CLI prints them as one line."""


class ModelError(DynidError):
    """A robot description is malformed or not physical."""


class DataError(DynidError):
    """A data file or array has the wrong content or shape."""


class IllConditionedError(DynidError):
    """A problem is rank deficient or too ill-conditioned to give trustworthy numbers."""


class DynidWarning(UserWarning):
    """Something almost surely wrong that does not stop the work (units, an old file format...);
    the CLI prints each as one 'warning:' line."""


class ClusterError(DynidError):
    """A Dask scheduler does not answer, or a cluster cannot run the work."""


def refuse_repeated(names, option: str, covers=None, error=DataError) -> None:
    """Refuse a list option that names one thing twice ('tau,tau', 'joint1,joint1', 'q=a.txt,q=b.txt'):
    either the second undoes the first (a sign flipped twice) or one of them is silently dropped.
    ``covers(a, b)``: whether item a already includes item b (--negate 'tau' includes 'tau2')."""
    names = list(names)
    for k, b in enumerate(names):
        for a in names[:k]:
            if a == b:
                raise error(f"{option}: '{b}' is given twice; give each once")
            if covers is not None and (covers(a, b) or covers(b, a)):
                whole, part = (a, b) if covers(a, b) else (b, a)
                raise error(f"{option}: '{part}' is already part of '{whole}' (given both); give one of them")
