"""The AgentRelBench fixtures the suite-importer tests share with the EOG world tests."""

from tests.worlds.eog.conftest import arb_root, arb_suite

__all__ = ["arb_root", "arb_suite"]
