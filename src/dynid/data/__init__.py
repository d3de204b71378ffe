"""Joint data files (CONTRACTS.md section 3): reading, cleaning, preprocessing, chunked streams."""

from dynid.data.columns import ColumnMapping, JointData
from dynid.data.io import load_joint_data, write_columns, write_joint_data
from dynid.data.preprocess import Preprocessing, prepare

__all__ = ["ColumnMapping", "JointData", "Preprocessing", "load_joint_data", "prepare",
           "write_columns", "write_joint_data"]
