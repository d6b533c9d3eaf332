"""The tool gateway: one chain of layers (recording, limits, boundary, faults) per run."""

from kaudit.gateway._call import Forward, GatewayCall, Layer
from kaudit.gateway._gateway import ToolGateway
from kaudit.gateway._limits import MAX_ARGUMENT_BYTES, LimitsLayer, RecordingLayer

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "Forward",
    "GatewayCall",
    "Layer",
    "LimitsLayer",
    "RecordingLayer",
    "ToolGateway",
]
