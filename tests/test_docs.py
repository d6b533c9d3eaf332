"""Every command of the CLI is documented in the README or docs/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from kaudit.cli.main import eager_app

ROOT = Path(__file__).parent.parent
app = eager_app()  # every command registered, as `kaudit --help` lists them


def command_paths(group: typer.Typer, prefix: str = "kaudit") -> list[str]:
    paths = [f"{prefix} {c.name or c.callback.__name__}" for c in group.registered_commands]  # type: ignore[union-attr]
    for sub in group.registered_groups:
        paths.extend(command_paths(sub.typer_instance, f"{prefix} {sub.name}"))  # type: ignore[arg-type]
    return paths


def test_every_command_is_documented() -> None:
    text = (ROOT / "README.md").read_text() + "".join(
        p.read_text() for p in (ROOT / "docs").glob("*.md")
    )
    undocumented = [path for path in command_paths(app) if path not in text]
    assert undocumented == []


def test_every_option_is_documented() -> None:
    """Fails if a command gains an option (e.g. `mcp serve --idle-timeout`) that no page of
    the README or docs/ names."""
    text = (ROOT / "README.md").read_text() + "".join(
        p.read_text() for p in (ROOT / "docs").glob("*.md")
    )

    def options(command: Any, path: str) -> list[str]:
        subcommands = getattr(command, "commands", None)  # a group (typer's own click)
        if subcommands is not None:
            return [o for n, c in subcommands.items() for o in options(c, f"{path} {n}")]
        flags = (flag for param in command.params for flag in param.opts)
        return [f"{path} {flag}" for flag in flags if flag.startswith("--")]

    every = options(typer.main.get_command(app), "kaudit")
    undocumented = [option for option in every if option.rsplit(" ", 1)[1] not in text]
    assert "kaudit mcp serve --idle-timeout" in every
    assert undocumented == []


def test_readme_opens_with_install_demo_and_test_commands() -> None:
    """Fails if the README's first commands drift from what `.ci/run` runs (CI would then
    prove an install or a test command nobody is told to use)."""
    readme = (ROOT / "README.md").read_text()
    head = readme[: readme.index("## ")]
    block = head.split("```bash\n", 1)[1].split("```", 1)[0]
    install, demo, test = (line.split("  #")[0].strip() for line in block.strip().splitlines())
    assert "./install.sh" in install and "pip install -e '.[dev]'" in head
    assert demo.startswith("kaudit run --suite builtin --agent reference")
    assert test == "python -m pytest"
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert [part.strip() for part in install.split("&&")] == [
        line for line in ci if line in {"./install.sh", ". .venv/bin/activate"}
    ]
    assert ci[-1] == test


def test_the_suite_page_example_task_is_the_real_file() -> None:
    """Fails if the complete task shown on docs/suite.md drifts from the shipped file."""
    page = (ROOT / "docs" / "suite.md").read_text()
    example = (ROOT / "src/kaudit/suites/builtin/itsm/change-cab-gate.yaml").read_text()
    assert f"```yaml\n{example}```" in page


def test_every_command_help_carries_an_example() -> None:
    def callbacks(group: typer.Typer) -> list[object]:
        found = [c.callback for c in group.registered_commands]
        for sub in group.registered_groups:
            found.extend(callbacks(sub.typer_instance))  # type: ignore[arg-type]
        return found

    missing = [cb for cb in callbacks(app) if "Example: kaudit " not in (cb.__doc__ or "")]
    assert missing == []


def test_the_readme_is_a_front_page() -> None:
    """Fails if the README grows back into a notebook (it was 728 lines, 132 of them
    performance): at most 250 lines, with the sections a new user looks for, and the
    venv's size linked to where it is measured rather than quoted in the install line."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for section in ("## Install", "## Tour", "## Use it from Python", "## Commands",
                    "## Real models", "## Documentation"):  # fmt: skip
        assert f"\n{section}\n" in readme
    assert "docs/images/report.png" in readme and "docs/models.md" in readme
    assert "KAUDIT_AGENTRELBENCH_DATA" in readme
    # the venv's size lives in the development page, measured there, and is linked from here
    assert "docs/development.md#the-venvs-size" in readme
    assert "\n## The venv's size\n" in (ROOT / "docs/development.md").read_text()
