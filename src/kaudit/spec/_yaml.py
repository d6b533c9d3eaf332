"""YAML for hand-written files, read as data with limits.

Task, identity, policy, model-config and prereg files come from other people (published
suites, pull requests), so the reader refuses what plain `yaml.safe_load` lets through:
aliases (a 3 KB file of nested aliases expands to gigabytes: the "billion laughs"),
duplicate keys (the second silently wins, so a reviewer reads one value and kaudit uses
another), merge keys (`<<:`, another way to give a key twice), nesting deep enough to
exhaust Python's recursion, and files too big to be hand-written. Every refusal is a
`SpecError` of one line naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kaudit.errors import SpecError

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Largest file read: hand-written task files are kilobytes; a world's extra rows, at
most a few hundred kilobytes."""

MAX_DEPTH = 64
"""Deepest nesting of lists and mappings; a task file needs about ten levels."""


def _loader_class() -> type[Any]:
    import yaml  # here, not at import: `report` and `stats` read no YAML (~10 ms)

    class StrictLoader(yaml.SafeLoader):
        """SafeLoader without aliases or duplicate keys, and with a depth limit."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.MarkedYAMLError(
                    problem="aliases (*name) are not allowed; write the value out",
                    problem_mark=event.start_mark,
                )
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    event = self.peek_event()  # type: ignore[no-untyped-call]
                    raise yaml.MarkedYAMLError(
                        problem=f"nested more than {MAX_DEPTH} levels deep",
                        problem_mark=event.start_mark,
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag.endswith(":merge"):
                    # `<<: {...}` sets keys a later line may set again, unseen: a key
                    # given twice by another spelling
                    raise yaml.MarkedYAMLError(
                        problem="merge keys (<<) are not allowed; write the keys out",
                        problem_mark=key_node.start_mark,
                    )
                if not isinstance(key_node, yaml.ScalarNode):
                    continue  # an unhashable key: SafeConstructor refuses it
                key = self.construct_object(key_node, deep=True)
                if key in seen:
                    raise yaml.MarkedYAMLError(
                        problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return StrictLoader


def _one_line(text: str) -> str:
    return " ".join(text.split())


def parse_yaml(text: str, source: Path | str) -> Any:
    """Parse YAML text under the limits above; errors name `source` and the line."""
    import yaml

    try:
        loader = _loader_class()(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}" if mark is not None else "<yaml>"
        reason = exc.problem or exc.context or "invalid YAML"
        raise SpecError(source, where, _one_line(str(reason))) from None
    except yaml.reader.ReaderError as exc:
        what = f"character #x{exc.character:04x}" if isinstance(exc.character, int) else "byte"
        reason = f"{what} at position {exc.position} is not allowed in YAML ({exc.reason})"
        raise SpecError(source, "<yaml>", _one_line(reason)) from None
    except yaml.YAMLError as exc:
        raise SpecError(source, "<yaml>", _one_line(str(exc))) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        raise SpecError(source, "<yaml>", _one_line(str(exc) or type(exc).__name__)) from None


def read_text_file(path: Path) -> str:
    """A hand-written file's text: UTF-8, at most `MAX_FILE_BYTES`; errors name the file."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SpecError(
                path, "<file>", f"{size:,} bytes, more than the {MAX_FILE_BYTES:,} a file may hold"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(path, "<file>", exc.strerror or str(exc)) from None
    return decode_utf8(data, path)


def decode_utf8(data: bytes, source: Path | str) -> str:
    """`data` as UTF-8 text; a `SpecError` naming `source` and the first bad byte if not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            source, "<file>", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def read_yaml(path: Path) -> Any:
    """Read and parse a hand-written YAML file; every failure is a one-line `SpecError`."""
    return parse_yaml(read_text_file(Path(path)), path)
