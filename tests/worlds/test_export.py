"""`kaudit world export`: a world as SQL files that the real sqlite3 and psql load."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import KauditError
from kaudit.label.diff import diff_images
from kaudit.substrate import StateDump
from kaudit.worlds._directory import DirectoryWorld
from kaudit.worlds._export import dependency_order, export_world
from kaudit.worlds._world import get_world
from tests.pg import server_url

runner = CliRunner()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("world")
    result = runner.invoke(app, ["world", "export", str(directory)])
    assert result.exit_code == 0, result.output
    return directory


def loaded_by_python(directory: Path) -> bytes:
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript((directory / "schema.sql").read_text())
    conn.executescript((directory / "seed.sql").read_text())
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    image = conn.serialize()
    conn.close()
    return image


def test_the_enterprise_world_loads_with_foreign_keys_on_and_equals_the_template(
    exported: Path,
) -> None:
    """Bug caught: tables in name order (`no such table: main.organizations`), or rows lost."""
    image = loaded_by_python(exported)
    template = get_world("enterprise").template_image()
    assert diff_images(template, image, fast=False) == []


def test_the_sqlite3_command_line_loads_it(exported: Path, tmp_path: Path) -> None:
    """Bug caught: statements the sqlite3 shell rejects (a missing `;`, a shell-only quirk)."""
    if shutil.which("sqlite3") is None:
        pytest.fail("the sqlite3 command-line shell is needed (apt install sqlite3)")
    database = tmp_path / "world.db"
    done = subprocess.run(
        ["sqlite3", "-bail", str(database), "PRAGMA foreign_keys = ON",
         f".read {exported / 'schema.sql'}", f".read {exported / 'seed.sql'}",
         "SELECT count(*) FROM invoices", "PRAGMA foreign_key_check"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "643\n")


@pytest.mark.postgres
def test_psql_loads_it_with_every_row(exported: Path) -> None:
    """Bug caught: SQLite-only DDL or literals in the PostgreSQL files, or a table loaded early."""
    url = server_url()
    if shutil.which("psql") is None:
        pytest.fail("psql is needed (apt install postgresql-client)")
    name = "kaudit_test_export"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    target = url.rsplit("/", 1)[0] + f"/{name}"
    try:
        done = subprocess.run(
            ["psql", "-v", "ON_ERROR_STOP=1", "-q", "-d", target,
             "-f", str(exported / "postgresql" / "schema.sql"),
             "-f", str(exported / "postgresql" / "seed.sql")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        template = StateDump.of(get_world("enterprise").template_image()).open()
        with psycopg.connect(target) as conn:
            for table in dependency_order(template):
                (count,) = template.execute(f'SELECT count(*) FROM "{table}"').fetchone()
                row = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
                assert row is not None and row[0] == count, table
        template.close()
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")


def build(sql: str) -> bytes:
    conn = sqlite3.connect(":memory:")
    conn.executescript(sql)
    image = conn.serialize()
    conn.close()
    return image


def test_a_child_named_before_its_parent_comes_after_it(tmp_path: Path) -> None:
    """Bug caught: alphabetical order, where `a_child` would be created before `z_parent`."""
    image = build(
        "CREATE TABLE z_parent (id TEXT PRIMARY KEY);"
        "CREATE TABLE a_child (id TEXT PRIMARY KEY, p TEXT REFERENCES z_parent(id));"
        "INSERT INTO z_parent VALUES ('p1'); INSERT INTO a_child VALUES ('c1', 'p1');"
    )
    done = export_world(image, tmp_path)
    assert done.tables == ("z_parent", "a_child")
    assert diff_images(image, loaded_by_python(tmp_path), fast=False) == []


def test_rows_of_a_self_referencing_table_come_parents_first(tmp_path: Path) -> None:
    """Bug caught: a row inserted before the row it references, refused with FKs on."""
    image = build(
        "CREATE TABLE staff (id TEXT PRIMARY KEY, boss TEXT REFERENCES staff(id));"
        "INSERT INTO staff VALUES ('b', NULL);"
        "PRAGMA foreign_keys = OFF; INSERT INTO staff VALUES ('a', 'c');"
        "INSERT INTO staff VALUES ('c', 'b');"
    )
    export_world(image, tmp_path)
    assert diff_images(image, loaded_by_python(tmp_path), fast=False) == []


def test_tables_that_reference_each_other_are_named(tmp_path: Path) -> None:
    """Bug caught: an order that cannot load is written anyway."""
    image = build(
        "CREATE TABLE a (id TEXT PRIMARY KEY, b TEXT REFERENCES b(id));"
        "CREATE TABLE b (id TEXT PRIMARY KEY, a TEXT REFERENCES a(id));"
    )
    with pytest.raises(KauditError, match="tables reference each other"):
        export_world(image, tmp_path)


def test_text_and_blobs_survive_the_round_trip(tmp_path: Path) -> None:
    """Bug caught: a quote in a value ends the literal, a blob becomes text."""
    image = build(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, raw BLOB, x REAL);"
        "INSERT INTO notes VALUES (1, 'it''s; DROP TABLE notes; --', X'00ff', 0.1);"
    )
    export_world(image, tmp_path)
    assert diff_images(image, loaded_by_python(tmp_path), fast=False) == []


def test_a_world_directory_exports_as_its_own_template(tmp_path: Path) -> None:
    """Bug caught: `--world PATH` exports the built-in world, or the directory's one wrongly."""
    example = Path(__file__).resolve().parents[2] / "examples" / "subscriptions"
    result = runner.invoke(app, ["world", "export", str(tmp_path), "--world", str(example)])
    assert result.exit_code == 0, result.output
    template = DirectoryWorld.load(example).template_image()
    assert diff_images(template, loaded_by_python(tmp_path), fast=False) == []
