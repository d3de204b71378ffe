"""Drives (DC motor, servo amplifiers) and identification from position, speed and motor voltage
without acceleration (docs/voltage_identification.md)."""

from dynid.drives.motor import DRIVE_KINDS, DriveSet, default_drives
from dynid.drives.regression import (
    DriveFit, FilteredSystem, filtered_system, identify_armature, identify_drive_model, predict_filtered,
    scale_groups,
)
from dynid.drives.signals import drive_signals, identification_truth, motor_currents

__all__ = [
    "DRIVE_KINDS", "DriveFit", "DriveSet", "FilteredSystem", "default_drives", "drive_signals",
    "filtered_system", "identification_truth", "identify_armature", "identify_drive_model",
    "motor_currents", "predict_filtered", "scale_groups",
]
