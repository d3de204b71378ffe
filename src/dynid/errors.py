"""Error types. Every message names the file, field or column and what was expected."""


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
