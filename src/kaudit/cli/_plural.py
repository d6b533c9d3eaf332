"""`counted` for the command modules; it lives beside the library that also words counts."""

from kaudit._plural import counted

__all__ = ["counted"]
