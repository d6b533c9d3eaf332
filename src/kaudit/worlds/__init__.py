"""Worlds tasks run on: the built-in enterprise world, the EOG emulation, plugins and yours."""

from kaudit.worlds._directory import DirectoryWorld, WorldManifest
from kaudit.worlds._export import (
    ExportedWorld,
    dependency_order,
    export_named_world,
    export_world,
)
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
    "ExportedWorld",
    "PythonWorld",
    "World",
    "WorldManifest",
    "dependency_order",
    "export_named_world",
    "export_world",
    "get_world",
    "register_world",
    "world_substrate",
]
