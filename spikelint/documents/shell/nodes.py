"""What a parsed script is made of: words, redirects, simple commands, pipelines, the script.

Plain data with file positions, shared by the parser that fills it and every check that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Iterator
from typing import NamedTuple


@dataclass(frozen=True)
class Word:
    """One shell word: ``text`` with quotes removed (variables NOT expanded), ``raw`` as written.

    ``end_line``/``end_column`` point just after the last character (exclusive).
    """

    text: str
    raw: str
    line: int
    column: int
    end_line: int
    end_column: int
    quoted: bool = False


@dataclass(frozen=True)
class Redirect:
    operator: str  # ">", ">>", "2>", "&>", "2>&1", "<", "<<", "<<<" … (fd number included)
    target: Word | None  # None for fd duplications such as 2>&1; the delimiter for << here-documents
    body: str | None = None  # here-document body (<< and <<- only)
    line: int = 0  # where the operator is
    column: int = 0


@dataclass
class SimpleCommand:
    """``A=1 B=2 prog arg … > file``: assignments, words (argv), redirects.

    A compound command (``( … )``, ``{ …; }``, ``for``/``while``/``until``/``if``/``case``)
    that is piped or redirected appears here as a stand-in: ``compound`` holds its keyword,
    ``words`` just that keyword, ``redirects`` the redirects written after it, and ``body``
    the pipelines inside it (which are also in the script's flat list: don't walk ``body``
    when you walk the whole script).
    """

    words: list[Word]
    assignments: list[Word] = field(default_factory=list)  # "NAME=value" words before argv
    redirects: list[Redirect] = field(default_factory=list)
    line: int = 1
    column: int = 1
    # the text of an embedded script (``bash -c '…'`` / ``sh -c`` / ``bash <<EOF``), parsed, with positions in this file
    inner: Script | None = None
    # the job script a here-document writes (``cat > job.sbatch <<EOF … EOF``), parsed as its own script
    written: Script | None = None
    compound: str = ""
    body: list[Pipeline] = field(default_factory=list)
    end_line: int = 0
    end_column: int = 0

    @property
    def name(self) -> str:
        return self.words[0].text if self.words else ""

    def argv(self) -> list[str]:
        return [word.text for word in self.words]


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
    nested: str = ""  # "$(", "`", "<(" or ">(" when the pipeline runs inside that substitution
    end_line: int = 0
    end_column: int = 0
    # what is done with its exit status (SPK501 asks whether a lost failure matters):
    tested: bool = False  # it runs in an if/while/until condition (set -e ignores it; the test consumes it)
    next_op: str = ""  # "&&" or "||" when it is followed by that operator in its and-or list
    rescued: bool = False  # a `||` follows it in its and-or list: its failure is handled there
    background: bool = False  # its and-or list ends with `&`: nobody waits for its status here
    last: bool = False  # its status can be the exit status of the whole script (or -c string)


@dataclass
class Script:
    """A whole script in order; compound commands (if/for/while/functions/subshells) are flattened.

    Pipelines inside command substitutions (``$(…)``, backticks, ``<(…)``) are in the flat
    list too, marked by ``Pipeline.nested``; ``bash -c`` strings are in ``SimpleCommand.inner``.
    """

    pipelines: list[Pipeline] = field(default_factory=list)
    # every simple assignment seen (NAME -> value words in order of appearance, incl. `export NAME=…`)
    assignments: dict[str, list[Word]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # unparseable fragments, "line L, column C: why"
    # function name -> the pipelines of its body (also in the flat list), for following calls
    functions: dict[str, list[Pipeline]] = field(default_factory=dict)
    error_positions: list[tuple[int, int]] = field(default_factory=list)  # (line, column) of each error

    def commands(self) -> list[SimpleCommand]:
        return [command for pipeline in self.pipelines for command in pipeline.commands]

    def scripts(self) -> Iterator[Script]:
        """This script and every script embedded in it (``bash -c`` strings, shell heredocs), depth first."""
        stack: list[Script] = [self]
        while stack:
            script = stack.pop()
            yield script
            stack.extend(reversed([command.inner for command in script.commands() if command.inner is not None]))

    def job_scripts(self) -> Iterator[Script]:
        """The job scripts this script and its embedded scripts write with here-documents
        (``cat > job.sbatch <<EOF … EOF``), each parsed as a script of its own, depth first."""
        for script in self.scripts():
            for command in script.commands():
                if command.written is not None:
                    yield command.written
                    yield from command.written.job_scripts()

    def variables(self) -> dict[str, str]:
        """The last value assigned to each name (for :func:`expand`)."""
        return {name: words[-1].text for name, words in self.assignments.items() if words}


class ShellCall(NamedTuple):
    """``bash [options] -c SCRIPT …`` found in an argv: where the shell and its script are."""

    shell_index: int
    script_index: int | None  # the -c string; None when the shell reads a file or stdin
    pipefail: bool
    errexit: bool


def nothing_parsed(script: Script) -> bool:
    """True when the input had errors and not one command or assignment could be read from it."""
    return bool(script.errors) and not script.pipelines and not script.assignments
