"""Joint data files (docs/formats.md section 3): reading, cleaning, preprocessing, chunked streams.

Attributes are imported on first use (``dynid.lazy``): ``dynid.data.columns`` alone does not
pull in SciPy's filters or PyArrow."""

from dynid.lazy import lazy_attributes

_WHERE = {"ColumnMapping": "dynid.data.columns", "JointData": "dynid.data.columns",
          "load_joint_data": "dynid.data.io", "write_columns": "dynid.data.io",
          "write_joint_data": "dynid.data.io", "Preprocessing": "dynid.data.preprocess",
          "prepare": "dynid.data.preprocess"}

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)

__all__ = ["ColumnMapping", "JointData", "Preprocessing", "load_joint_data", "prepare",
           "write_columns", "write_joint_data"]
