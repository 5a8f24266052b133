"""CEL, the language of Kubernetes ValidatingAdmissionPolicy, through ``common-expression-language``.

Chosen by measurement over ``cel-python`` (bench/cel_compare.py, docs/team-rules.md): about a microsecond per
evaluation against a context built once per workload, against 130-170 µs; compile errors with line and column.
A compiled program cannot be pickled, so each process compiles a rule set once (the first file it checks).
"""

from __future__ import annotations

import re
from functools import lru_cache
from types import ModuleType
from typing import Any
from typing import NamedTuple

POSITION = re.compile(r"<input>:(\d+):(\d+): (.*)")


class CompileError(Exception):
    """An expression that does not compile; ``column`` is 1-based inside the expression (one past its end
    when the expression stops short)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line, self.column = line, column


class EvaluationError(Exception):
    """An expression that failed on one object (a missing key, a type error)."""


class Program(NamedTuple):
    source: str
    compiled: Any


@lru_cache(maxsize=1)
def _cel() -> ModuleType:
    """The library's compiled core alone: its package ``__init__`` also imports its command-line tool (typer,
    rich, prompt_toolkit), 140 ms that a lint run does not need; the whole package when the core cannot be
    found on its own."""
    import importlib.machinery
    import importlib.util
    from pathlib import Path

    found = importlib.util.find_spec("cel")  # finds the package without running its __init__
    folder = Path(found.origin).parent if found is not None and found.origin else None
    for suffix in importlib.machinery.EXTENSION_SUFFIXES if folder is not None else ():
        assert folder is not None
        core = folder / f"cel{suffix}"
        if core.is_file():
            loader = importlib.machinery.ExtensionFileLoader("cel.cel", str(core))
            spec = importlib.util.spec_from_file_location("cel.cel", core, loader=loader)
            if spec is not None:
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
                return module
    import cel

    return cel


def compile_expression(text: str) -> Program:
    cel = _cel()
    try:
        return Program(text, cel.compile(text))
    except (ValueError, RuntimeError) as error:
        message = str(error)
        found = POSITION.search(message)
        if found is None:
            raise CompileError(message.splitlines()[0], 1, 1) from None
        line, column, what = int(found.group(1)), int(found.group(2)), found.group(3)
        raise CompileError(what.replace("ERROR: ", "").strip(), line, column) from None


def context(variables: dict[str, Any]) -> Any:
    """The variables converted once, for every rule evaluated on the same object."""
    return _cel().Context(variables=variables)


def evaluate(program: Program, variables: Any) -> Any:
    """The value of ``program``; :class:`EvaluationError` with a message a rule author understands."""
    try:
        return program.compiled.execute(variables)
    except KeyError as error:
        raise EvaluationError(f"no such key: {error.args[0]!r} (test it first with has() or `in`)") from None
    except TypeError as error:
        text = str(error)
        if "No such overload" in text:
            text = ("no such overload: the operand types do not match, or a field of a null value was read (CEL does "
                    "not convert between int, double and string: write 8.0 for a double, or convert with int(), "
                    "double(), string(); test null with `x != null`)")
        raise EvaluationError(text.split(". CEL does not")[0]) from None
    except Exception as error:  # noqa: BLE001 - IndexError, ZeroDivisionError, RuntimeError: any failure on one object
        raise EvaluationError(str(error).splitlines()[0] if str(error) else type(error).__name__) from None
