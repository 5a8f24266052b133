"""A Python file written for a newer Python than the one spikelint runs on is correct code: it is
said as info (SPK003, naming the version it needs), never reported as unparseable (SPK001)."""

from __future__ import annotations

import secrets
import string
import sys

import pytest

from spikelint.engine import lint_snippet

TYPE_ALIAS = "type Batch = list[dict[str, int]]\n\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n"
NESTED_QUOTES = 'run = "sft"\nprint(f"{run + "-final"}")\n'
BROKEN = "def train(:\n    pass\n"
PYTHON_TWO = "print 'epoch', 3\n"

newer_only = pytest.mark.skipif(sys.version_info >= (3, 12), reason="this interpreter parses 3.12 syntax itself")


def _found(text: str) -> list[tuple[int, str, str, str]]:
    return [(finding.line, finding.rule, finding.severity, finding.message)
            for finding in lint_snippet("train.py", text)]


@newer_only
@pytest.mark.parametrize("text", [TYPE_ALIAS, NESTED_QUOTES], ids=["type-params", "pep701-fstring"])
def test_valid_newer_python_is_info_naming_the_version(text: str) -> None:
    found = _found(text)
    assert [rule for _, rule, _, _ in found] == ["SPK003"]
    line, _, severity, message = found[0]
    assert severity == "info" and line == 1  # SPK003 is said at line 1; the message names where the syntax is
    assert "Python 3.12" in message and "run spikelint on Python 3.12 or newer" in message
    assert f"(line {2 if text is NESTED_QUOTES else 1}, column" in message


@pytest.mark.parametrize("text, line", [(BROKEN, 1), (PYTHON_TWO, 1)], ids=["broken", "python2"])
def test_code_no_python_parses_stays_an_error(text: str, line: int) -> None:
    found = _found(text)
    assert (line, "SPK001", "error") in [(place, rule, severity) for place, rule, severity, _ in found]


@newer_only
def test_a_token_in_a_newer_python_file_is_still_found() -> None:
    token = "hf_" + "".join(secrets.choice(string.ascii_letters) for _ in range(34))
    found = _found(TYPE_ALIAS + f'HF_TOKEN = "{token}"\n')
    assert "SPK003" in [rule for _, rule, _, _ in found]
    assert any(rule.startswith("SPK20") for _, rule, _, _ in found)


@newer_only
@pytest.mark.parametrize("text", [
    "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n",
    'rows = ["a"]\nprint(f"{"\\n".join(rows)}")\n',
    "class Box[T]:\n    pass\n",
], ids=["pep758-except", "backslash-in-fstring", "generic-class"])
def test_other_newer_constructs_are_info(text: str) -> None:
    assert [rule for _, rule, _, _ in _found(text)] == ["SPK003"]


def test_hostile_nesting_on_a_newer_looking_line_is_a_clean_error() -> None:
    text = "type Deep = " + "(" * 5000 + "int" + ")" * 5000 + "\n"
    assert [rule for _, rule, _, _ in _found(text)] == ["SPK001"]
