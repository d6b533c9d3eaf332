"""Connections to the real server: the user's session settings survive kaudit's own."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from psycopg.conninfo import conninfo_to_dict

from kaudit.postgres._conn import connect
from kaudit.substrate._choice import open_substrate
from tests.postgres import pg_world

pytestmark = pytest.mark.postgres


def with_options(url: str, options: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}options={quote(options)}"


def settings(url: str, *names: str) -> tuple[str, ...]:
    with connect(url) as conn:
        return tuple(str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in names)  # type: ignore[index]


def test_the_urls_options_are_kept_beside_kaudits(pg_url: str) -> None:
    """Fails if kaudit's `options` replace the URL's (the user's statement_timeout and
    search_path silently gone) or the user's displace kaudit's UTC."""
    url = with_options(pg_url, "-c statement_timeout=4321 -c search_path=public,pg_catalog")
    assert settings(url, "statement_timeout", "search_path", "TimeZone") == (
        "4321ms",
        "public,pg_catalog",
        "UTC",
    )


def test_pgoptions_is_kept_when_the_url_has_none(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if the `options` kaudit passes make libpq ignore the user's `PGOPTIONS`."""
    monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=2345")
    assert settings(pg_url, "lock_timeout", "TimeZone") == ("2345ms", "UTC")


def test_kaudits_timezone_wins_over_the_users(pg_url: str) -> None:
    """Fails if a user's TimeZone reaches kaudit's sessions: timestamptz values would read
    back in that zone, unlike the template's text."""
    url = with_options(pg_url, "-c TimeZone=Asia/Tokyo -c statement_timeout=5000")
    assert settings(url, "TimeZone", "statement_timeout") == ("UTC", "5s")


def test_a_run_sandbox_session_carries_the_urls_options(pg_url: str) -> None:
    """Fails if a run's own connection (the one the agent's tools use) drops the URL's
    options, even though the admin connections keep them."""
    url = with_options(pg_url, "-c statement_timeout=6789")
    substrate = open_substrate(url, pg_world.blueprint())
    sandbox = substrate.seed("kaudit_pgconn_options/m/t/0")
    try:
        row = sandbox.db.one("SHOW statement_timeout")  # type: ignore[attr-defined]
    finally:
        sandbox.close()
    assert row == {"statement_timeout": "6789ms"}


def service_url(pg_url: str, options: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A URL naming a libpq service, written to a service file, that holds `options`."""
    lines = [f"{key}={value}" for key, value in conninfo_to_dict(pg_url).items()]
    path.write_text("\n".join(["[kaudit_test]", *lines, f"options={options}", ""]))
    monkeypatch.setenv("PGSERVICEFILE", str(path))
    monkeypatch.delenv("PGOPTIONS", raising=False)
    return "postgresql:///?service=kaudit_test"


def test_a_service_files_options_are_kept(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if kaudit passes its own `options`, which libpq takes instead of the service
    file's (the user's statement_timeout silently gone), or the service's TimeZone wins."""
    url = service_url(
        pg_url,
        "-c statement_timeout=4321 -c TimeZone=Asia/Tokyo",
        tmp_path / "pg_service.conf",
        monkeypatch,
    )
    assert settings(url, "statement_timeout", "TimeZone") == ("4321ms", "UTC")


def test_a_run_sandbox_session_carries_the_service_files_options(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if a run's own connection (to its cloned database, named beside the service)
    drops the service file's options."""
    url = service_url(
        pg_url, "-c statement_timeout=6789", tmp_path / "pg_service.conf", monkeypatch
    )
    sandbox = open_substrate(url, pg_world.blueprint()).seed("kaudit_pgconn_service/m/t/0")
    try:
        row = sandbox.db.one("SHOW statement_timeout")  # type: ignore[attr-defined]
    finally:
        sandbox.close()
    assert row == {"statement_timeout": "6789ms"}


def test_a_pooled_connection_keeps_utc_across_rolled_back_runs(pg_url: str) -> None:
    """Fails if kaudit's TimeZone is set once per connection but inside the first run's
    transaction (or a run's own SET outlives it): the rollback that resets the pooled
    database undoes it, and the next run on the same connection reads timestamps in the
    user's zone (Asia/Tokyo)."""
    url = with_options(pg_url, "-c TimeZone=Asia/Tokyo") + "&reset=rollback"
    substrate = open_substrate(url, pg_world.blueprint())
    seen = []
    for i in range(2):
        sandbox = substrate.seed(f"kaudit_pgconn_pool/m/t/{i}")
        try:
            db = sandbox.db  # type: ignore[attr-defined]
            seen.append((db.one("SELECT pg_backend_pid() AS pid")["pid"], db.one("SHOW TimeZone")))
            db.execute("SET TimeZone = 'Asia/Tokyo'")
        finally:
            sandbox.close()
            substrate.pool().settle()  # type: ignore[attr-defined]  # rolled back, pooled again
    assert seen[0][0] == seen[1][0]  # the same pooled connection
    assert [zone for _, zone in seen] == [{"TimeZone": "UTC"}, {"TimeZone": "UTC"}]
