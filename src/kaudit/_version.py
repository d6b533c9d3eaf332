"""The package version, in a module of its own so rooms can read it without the facade.

`kaudit/__init__.py` names the public API (for the type checker, and lazily at run
time), so a room that imported `kaudit` for its version would import every room above
it on paper: an import cycle.
"""

__version__ = "0.1.0"
