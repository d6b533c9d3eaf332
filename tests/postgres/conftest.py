from __future__ import annotations

import pytest

from tests.pg import server_url


@pytest.fixture(scope="session")
def pg_url() -> str:
    return server_url()
