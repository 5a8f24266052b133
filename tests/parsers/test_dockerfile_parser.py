"""The Dockerfile parser: directives, continuations, heredocs, flags, forms, ARG/ENV, stages, RUN scripts."""

from __future__ import annotations

import random

import pytest

from spikelint.documents.dockerfile import Dockerfile
from spikelint.documents.dockerfile import nothing_parsed
from spikelint.documents.dockerfile import parse_dockerfile
from spikelint.documents.dockerfile import resolve_args


def instruction(text: str, keyword: str, nth: int = 0):  # type: ignore[no-untyped-def]
    found = [item for item in parse_dockerfile(text).instructions if item.keyword == keyword]
    return found[nth]


def test_parser_directives_only_at_the_top() -> None:
    parsed = parse_dockerfile("# syntax = docker/dockerfile:1.7\n# check=skip=JSONArgsRecommended\n"
                              "# escape=\\\nFROM a\n# escape=`\n")
    assert {key: (value.value, value.line, value.column) for key, value in parsed.directives.items()} == {
        "syntax": ("docker/dockerfile:1.7", 1, 12), "check": ("skip=JSONArgsRecommended", 2, 9),
        "escape": ("\\", 3, 10)}
    assert parsed.escape == "\\"
    late = parse_dockerfile("# a comment\n# syntax=docker/dockerfile:1\nFROM a\n")
    assert late.directives == {}


def test_unknown_directive_ends_the_directives() -> None:
    parsed = parse_dockerfile("# foo=bar\n# syntax=x\nFROM a\n")
    assert parsed.directives == {}


def test_keywords_are_case_insensitive_and_positioned() -> None:
    parsed = parse_dockerfile("from ubuntu:22.04 as Base\n  run echo hi\nWorkDir /x\n")
    assert [(i.keyword, i.line, i.column) for i in parsed.instructions] == [
        ("FROM", 1, 1), ("RUN", 2, 3), ("WORKDIR", 3, 1)]
    assert parsed.stages[0].name == "Base" and parsed.stage_named("base") is parsed.stages[0]


def test_continuations_skip_comment_and_blank_lines() -> None:
    text = ("FROM a\nRUN apt-get update && \\\n    # a comment inside\n    apt-get install -y \\\n\n"
            "      curl | tee /log\nUSER 1000\n")
    run = instruction(text, "RUN")
    assert run.value == "apt-get update &&     apt-get install -y       curl | tee /log"
    assert (run.line, run.end_line) == (2, 6)
    assert run.locate(run.value.index("curl")) == (6, 7)
    script = run.script
    assert script is not None and script.errors == []
    assert [(p.line, p.column) for p in script.pipelines] == [(2, 5), (4, 5)]
    assert script.pipelines[1].commands[1].argv() == ["tee", "/log"]
    assert script.pipelines[1].commands[1].words[0].line == 6
    assert instruction(text, "USER").line == 7


def test_backtick_escape_for_windows_images() -> None:
    parsed = parse_dockerfile("# escape=`\nFROM mcr.microsoft.com/windows/servercore:ltsc2022\n"
                              "RUN dir `\n    c:\\ | findstr x\nSHELL [\"powershell\", \"-command\"]\nRUN a | b\n")
    assert parsed.errors == [] and parsed.escape == "`"
    runs = [i for i in parsed.instructions if i.keyword == "RUN"]
    assert runs[0].value == "dir     c:\\ | findstr x" and runs[0].end_line == 4
    assert [run.script for run in runs] == [None, None]  # cmd / powershell are not parsed as sh


def test_flags_are_collected_with_positions() -> None:
    text = ("FROM --platform=$BUILDPLATFORM golang:1.22 AS build\n"
            "COPY --from=ghcr.io/astral-sh/uv:0.4.0 --chmod=755 --link /uv /bin/uv\n"
            "RUN --mount=type=cache,target=/root/.cache \\\n"
            "    --mount=type=bind,from=img:1.0,target=/x pip install x\n")
    parsed = parse_dockerfile(text)
    copy, run = parsed.instructions[1], parsed.instructions[2]
    assert copy.flags == {"from": "ghcr.io/astral-sh/uv:0.4.0", "chmod": "755", "link": ""}
    assert copy.flag_locations["from"][0][1:3] == (2, 13)
    assert copy.arguments == [("/uv", 2, 59), ("/bin/uv", 2, 63)]
    assert run.flags["mount"] == "type=cache,target=/root/.cache\ntype=bind,from=img:1.0,target=/x"
    assert [(m.line, m.column) for m in run.flag_locations["mount"]] == [(3, 13), (4, 13)]
    assert run.script is not None and run.script.pipelines[0].commands[0].argv() == ["pip", "install", "x"]
    assert run.script.pipelines[0].line == 4
    assert parsed.stages[0].platform == "$BUILDPLATFORM"
    assert (parsed.stages[0].base, parsed.stages[0].base_line, parsed.stages[0].base_column) == ("golang:1.22", 1, 32)


def test_exec_form_and_shell_form() -> None:
    text = ('FROM a\nCMD ["python", "train.py", "--out", "/ckpt"]\nENTRYPOINT ["bash", "-c", "a | b"]\n'
            "RUN [ -f x ] && echo y\nCMD [not json\n")
    parsed = parse_dockerfile(text)
    cmd, entrypoint, run, broken = parsed.instructions[1:]
    assert cmd.exec_form and cmd.arguments == [("python", 2, 6), ("train.py", 2, 16), ("--out", 2, 28),
                                               ("/ckpt", 2, 37)]
    assert cmd.script is not None and cmd.script.pipelines[0].commands[0].argv() == ["python", "train.py", "--out",
                                                                                      "/ckpt"]
    inner = entrypoint.script.pipelines[0].commands[0].inner  # type: ignore[union-attr]
    assert inner is not None and [c.name for c in inner.commands()] == ["a", "b"]
    assert inner.pipelines[0].column == 28
    assert not run.exec_form and run.script is not None and len(run.script.pipelines) == 2
    assert not broken.exec_form


def test_heredocs() -> None:
    text = ("FROM a\nRUN <<EOF\nset -e\npython a.py | tee x\nEOF\n"
            "RUN python3 <<-PY > out.txt\n\timport sys\n\tprint(1)\n\tPY\n"
            "COPY <<A /a.txt <<\"B\" /b.txt\nhello\nA\nworld\nB\n"
            "RUN <<EOF\n#!/usr/bin/env python3\nprint('x | y')\nEOF\nUSER x\n")
    parsed = parse_dockerfile(text)
    assert parsed.errors == []
    body_run, python_run, copy, python_script, user = parsed.instructions[1:]
    assert body_run.heredocs == [("set -e\npython a.py | tee x\n", 3)] and body_run.end_line == 5
    assert body_run.script is not None and [(p.line, [c.name for c in p.commands]) for p in body_run.script.pipelines] == [
        (3, ["set"]), (4, ["python", "tee"])]
    assert python_run.heredocs == [("\timport sys\n\tprint(1)\n", 7)] and python_run.end_line == 9
    assert python_run.script is not None and python_run.script.errors == []
    command = python_run.script.pipelines[0].commands[0]
    assert command.argv() == ["python3"] and [r.operator for r in command.redirects] == ["<<-", ">"]
    assert copy.heredocs == [("hello\n", 11), ("world\n", 13)] and copy.end_line == 14
    assert python_script.script is not None and python_script.script.pipelines == []
    assert user.line == 19


def test_args_env_and_labels() -> None:
    text = ('ARG BASE=ubuntu TAG\nARG PY="3.11"\nFROM ${BASE}:${TAG:-22.04}\nARG TAG\nARG LOCAL=1\n'
            'ENV A=1 B="two words" C=\nENV LEGACY value with spaces\nLABEL org.opencontainers.image.source="https://x"\n')
    parsed = parse_dockerfile(text)
    assert parsed.global_args == {"BASE": "ubuntu", "TAG": None, "PY": "3.11"}
    assert parsed.stages[0].args == {"TAG": None, "LOCAL": "1"}
    assert [i.stage for i in parsed.instructions] == [-1, -1, 0, 0, 0, 0, 0, 0]
    env, legacy, label = parsed.instructions[5:]
    pairs = [((n.value, n.line, n.column), (v.value, v.column) if v else None) for n, v in env.pairs]
    assert pairs == [(("A", 6, 5), ("1", 7)), (("B", 6, 9), ("two words", 11)), (("C", 6, 23), ("", 25))]
    assert [(n.value, v.value if v else None, v.column if v else None) for n, v in legacy.pairs] == [
        ("LEGACY", "value with spaces", 12)]
    assert label.pairs[0][0].value == "org.opencontainers.image.source" and label.pairs[0][1].value == "https://x"  # type: ignore[union-attr]


def test_stage_args_inherit_global_defaults() -> None:
    parsed = parse_dockerfile("ARG V=1\nFROM a\nARG V\n")
    assert parsed.stages[0].args == {"V": "1"}


def test_stages_shell_and_pipefail() -> None:
    text = ('FROM a AS build\nSHELL ["/bin/bash", "-o", "pipefail", "-c"]\nRUN a | b\n'
            "FROM build AS final\nRUN c | d\nFROM scratch\nRUN e | f\nCOPY --from=0 /x /y\n")
    parsed = parse_dockerfile(text)
    runs = [i for i in parsed.instructions if i.keyword == "RUN"]
    assert [run.script.pipelines[0].pipefail for run in runs] == [True, True, False]  # type: ignore[union-attr]
    assert [stage.index for stage in parsed.stages] == [0, 1, 2]
    assert parsed.stage_named("0") is parsed.stages[0] and parsed.stage_named("final", before=1) is None


@pytest.mark.parametrize("text, args, expected", [
    ("${BASE}:${TAG:-22.04}", {"BASE": "ubuntu", "TAG": None}, "ubuntu:22.04"),
    ("${BASE}:${TAG:-22.04}", {"BASE": "ubuntu", "TAG": "24.04"}, "ubuntu:24.04"),
    ("$BASE", {"BASE": None}, None),
    ("$UNDECLARED", {}, None),
    ("img${SUFFIX:+-$SUFFIX}", {"SUFFIX": "gpu"}, "img-gpu"),
    ("img${SUFFIX:+-$SUFFIX}", {"SUFFIX": None}, "img"),
    ("plain:1.0", {}, "plain:1.0"),
    ("\\$NOT", {}, "$NOT"),
])
def test_resolve_args(text: str, args: dict[str, str | None], expected: str | None) -> None:
    assert resolve_args(text, args) == expected


def test_resolve_args_with_backtick_escape() -> None:
    assert resolve_args("a`$b", {}, escape="`") == "a$b"


@pytest.mark.parametrize("text, message, line", [
    ("FROM a\nBOGUS thing\n", "unknown instruction: BOGUS", 2),
    ("FROM a\nRUNN apt-get\n", "unknown instruction: RUNN", 2),
    ("FROM\n", "FROM requires at least one argument", 1),
    ("FROM a b\n", "FROM requires either one or three arguments", 1),
    ("FROM a\nRUN\n", "RUN requires at least one argument", 2),
    ("FROM a\nSHELL /bin/bash -c\n", "SHELL requires the JSON array form", 2),
    ("# escape=x\nFROM a\n", "invalid escape directive", 1),
    ("FROM a\nRUN a \\\n", None, None),
])
def test_malformed_lines_are_errors_with_positions(text: str, message: str | None, line: int | None) -> None:
    parsed = parse_dockerfile(text)
    if message is None:
        assert parsed.errors == []
        return
    assert any(message in error[0] and error[1] == line for error in parsed.errors), parsed.errors


def test_parsing_goes_on_after_an_error() -> None:
    parsed = parse_dockerfile("FROM a\nBOGUS\nRUN x | y\n")
    assert [i.keyword for i in parsed.instructions] == ["FROM", "RUN"]
    assert not nothing_parsed(parsed) and nothing_parsed(parse_dockerfile("this is not a Dockerfile\n"))


@pytest.mark.parametrize("text", [
    "", "\n", "#", "\\", "FROM", "RUN <<", "RUN <<EOF", "RUN <<EOF\nno end", "CMD [", 'CMD ["a", 1]', "ENV",
    "ENV =x", "ARG =", "FROM a AS", "RUN \\\n\\\n\\", "\r\nFROM a\r\nRUN b | c\r\n", "\x00", "ONBUILD",
    "HEALTHCHECK CMD a | b", "RUN --mount", "COPY --from= /a /b",
])
def test_odd_inputs_never_raise(text: str) -> None:
    assert isinstance(parse_dockerfile(text), Dockerfile)


def test_random_inputs_never_raise() -> None:
    alphabet = ["FROM ", "RUN ", "ENV ", "ARG ", "COPY ", "<<EOF", "EOF", "\\", "\n", "#", "[", "]", '"', "'", "=",
                "$", "{", "}", "--mount=", "a", " ", "|", "`"]
    generator = random.Random(11)
    for _ in range(300):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 40)))
        assert isinstance(parse_dockerfile(text), Dockerfile)


def test_wrong_type_never_raises() -> None:
    assert parse_dockerfile(None) == Dockerfile()  # type: ignore[arg-type]
    assert resolve_args(None, {}) is None  # type: ignore[arg-type]


def test_from_tolerates_a_trailing_comment() -> None:
    parsed = parse_dockerfile("FROM ubuntu:22.04 AS tools  # pinned below\nFROM img  # note\n")
    assert parsed.errors == []
    assert [(stage.base, stage.name) for stage in parsed.stages] == [("ubuntu:22.04", "tools"), ("img", None)]


def test_heredoc_marker_inside_quotes_is_text() -> None:
    parsed = parse_dockerfile('FROM a\nRUN echo "use <<EOF to start" > notes\nRUN echo \'<<END\' && b | c\nUSER x\n')
    assert [i.keyword for i in parsed.instructions] == ["FROM", "RUN", "RUN", "USER"]
    assert all(i.heredocs == [] for i in parsed.instructions)
