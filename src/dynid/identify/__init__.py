"""Identification: the model (rigid body + friction + drives), base parameters, estimators, validation."""

from dynid.identify.base import (
    BaseParameters, base_parameters, base_regressor, column_normalize, condition_number,
    identifiability_table,
)
from dynid.identify.model import (
    FRICTION_MODELS, ModelOptions, friction_columns, full_parameters, identification_regressor,
    model_torques, parameter_names,
)

__all__ = [
    "FRICTION_MODELS", "BaseParameters", "ModelOptions", "base_parameters", "base_regressor",
    "column_normalize", "condition_number", "friction_columns", "full_parameters",
    "identifiability_table", "identification_regressor", "model_torques", "parameter_names",
]
