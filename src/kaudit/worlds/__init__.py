"""Worlds tasks run on: the built-in enterprise world, the EOG emulation, plugins and yours."""

from kaudit.worlds._directory import DirectoryWorld, WorldManifest
from kaudit.worlds._protocol import DeclaresOwnership, World
from kaudit.worlds._world import (
    ENTRY_POINT_GROUP,
    WORLDS,
    PythonWorld,
    get_world,
    register_world,
    world_substrate,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "WORLDS",
    "DeclaresOwnership",
    "DirectoryWorld",
    "PythonWorld",
    "World",
    "WorldManifest",
    "get_world",
    "register_world",
    "world_substrate",
]
