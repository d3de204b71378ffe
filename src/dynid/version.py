"""The version of dynid, in one place: pyproject.toml reads it when the package is built, and
``dynid.__version__``, result.json, the model files and the report print it (CHANGELOG.md)."""

__version__ = "0.1.0"
