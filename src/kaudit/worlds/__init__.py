"""Worlds tasks run on: the built-in enterprise world and any registered through entry points."""

from kaudit.worlds._world import ENTRY_POINT_GROUP, World, get_world, register_world

__all__ = ["ENTRY_POINT_GROUP", "World", "get_world", "register_world"]
