"""Worlds tasks run on: the built-in enterprise world, the EOG emulation, plugins and yours."""

from kaudit.worlds._protocol import DeclaresOwnership, World
from kaudit.worlds._world import PythonWorld, register_world

__all__ = [
    "DeclaresOwnership",
    "PythonWorld",
    "World",
    "register_world",
]
