"""Dockerfiles -> positioned instructions and build stages (types; the parser follows)."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from spikelint.documents.shell import Script


@dataclass
class Instruction:
    """One instruction after joining continuation lines and heredocs."""

    keyword: str  # upper-case: FROM, RUN, ENV, ARG, COPY …
    value: str  # the text after the keyword (continuations joined), flags included
    line: int  # where the keyword is
    column: int
    end_line: int
    flags: dict[str, str] = field(default_factory=dict)  # --from=…, --mount=… (repeated --mount joined by '\n')
    arguments: list[tuple[str, int, int]] = field(default_factory=list)  # (text, line, column) after the flags
    heredocs: list[tuple[str, int]] = field(default_factory=list)  # (body, first line) of << heredocs
    script: Script | None = None  # RUN (shell form): the parsed command, positions in the file
    stage: int = 0  # index of the build stage it belongs to


@dataclass
class Stage:
    index: int
    name: str | None  # FROM … AS name
    base: str  # the image reference as written (ARGs not resolved)
    base_line: int
    base_column: int


@dataclass
class Dockerfile:
    instructions: list[Instruction] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    global_args: dict[str, str | None] = field(default_factory=dict)  # ARGs before the first FROM: default or None
    errors: list[tuple[str, int, int]] = field(default_factory=list)
