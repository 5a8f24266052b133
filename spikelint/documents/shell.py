"""Shell scripts -> positioned simple commands and pipelines (types; the parser follows)."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field


@dataclass(frozen=True)
class Word:
    """One shell word: ``text`` with quotes removed (variables NOT expanded), ``raw`` as written."""

    text: str
    raw: str
    line: int
    column: int
    end_line: int
    end_column: int
    quoted: bool = False


@dataclass(frozen=True)
class Redirect:
    operator: str  # ">", ">>", "2>", "&>", "2>&1", "<" …
    target: Word | None  # None for fd duplications such as 2>&1


@dataclass
class SimpleCommand:
    """``A=1 B=2 prog arg … > file``: assignments, words (argv), redirects."""

    words: list[Word]
    assignments: list[Word] = field(default_factory=list)  # "NAME=value" words before argv
    redirects: list[Redirect] = field(default_factory=list)
    line: int = 1
    column: int = 1
    # the text of an embedded script (``bash -c '…'`` / ``sh -c``), parsed, with positions in this file
    inner: Script | None = None

    @property
    def name(self) -> str:
        return self.words[0].text if self.words else ""


@dataclass
class Pipeline:
    """Commands joined by ``|`` (one command when there is no pipe)."""

    commands: list[SimpleCommand]
    line: int
    column: int
    pipefail: bool  # ``set -o pipefail`` in effect at this point of the script
    errexit: bool = False
    negated: bool = False
    condition: str = ""  # text of enclosing if-conditions, e.g. '[ "$RANK" = 0 ]' (rank-0 guards)


@dataclass
class Script:
    """A whole script in order; compound commands (if/for/while/functions/subshells) are flattened."""

    pipelines: list[Pipeline] = field(default_factory=list)
    # every simple assignment seen (NAME -> value words in order of appearance, incl. `export NAME=…`)
    assignments: dict[str, list[Word]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # unparseable fragments, reported as SPK001 by the caller

    def commands(self) -> list[SimpleCommand]:
        return [command for pipeline in self.pipelines for command in pipeline.commands]
