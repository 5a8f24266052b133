"""SPK201–SPK207: secrets in any scanned file, workload env literals, command-line credentials,
notebook outputs, image tarballs and credential files.

One value, one finding: each document is scanned once by the specific rules (SPK202–SPK206)
and once by the general detector (SPK201); a general finding for a value a specific rule
already reported on the same line is dropped.  Every message holds the redacted form only,
and every problem's key is a hash of the secret, so neither output nor baseline holds it.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING
from typing import Callable
from typing import Iterable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import EnvVar
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.model import walk
from spikelint.secrets.cmdline import ArgWord
from spikelint.secrets.cmdline import command_secrets
from spikelint.secrets.cmdline import shell_script_word
from spikelint.secrets.cmdline import split_commands
from spikelint.secrets.context import is_digit_password
from spikelint.secrets.context import is_not_a_credential_literal
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_reference
from spikelint.secrets.context import is_secret_env_name
from spikelint.secrets.context import looks_like_secret_name
from spikelint.secrets.credentials import credential_file_kind
from spikelint.secrets.credentials import credential_file_secrets
from spikelint.secrets.credentials import credential_object_secrets
from spikelint.secrets.detectors import PREFILTER
from spikelint.secrets.detectors import DETECT_SECRETS_PREFILTER
from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import token_secrets
from spikelint.secrets.detectors import type_for_key
from spikelint.secrets.python import magic_free_source
from spikelint.secrets.python import python_secrets
from spikelint.secrets.redact import redact
from spikelint.secrets.redact import secret_key
from spikelint.secrets.carriers import text_mode
from spikelint.secrets.text import CONFIG
from spikelint.secrets.text import PROSE
from spikelint.secrets.text import LineIndex
from spikelint.secrets.text import has_secret_hint
from spikelint.secrets.text import find_in_text

if TYPE_CHECKING:
    from spikelint.documents.image import ImageContents
    from spikelint.documents.notebook import Cell
    from spikelint.documents.shell import Script

DOCUMENT_RULES = ("SPK201", "SPK202", "SPK203", "SPK204", "SPK206")
COMMAND_KEYS = frozenset(("command", "args", "arguments", "cmd", "entrypoint", "script", "run", "before_script",
                          "after_script", "commands"))
PROGRAM_KEYS = frozenset(("command", "cmd", "entrypoint"))
VALUE_KEYS = frozenset(("value", "default", "defaultValue", "val"))
NAME_KEYS = ("name", "key", "variable", "env", "envName")
MAX_SHELL_DEPTH = 3

FIX_GENERAL = "rotate it and load it from a secret store or an environment variable injected from a secret"
FIX_ENV = ("reference a secret instead (valueFrom.secretKeyRef, Run:ai SECRET:<name>,<key> or --env-secret, "
           "REST secret: {name, key}) and rotate it")
FIX_COMMAND = ("command lines show up in ps, shell history, CI logs and the workload spec: pass it through an "
               "environment variable populated from a secret, and rotate it")


class Found(NamedTuple):
    """A secret located in a document, with the rule that reports it and how to say where it is."""

    rule: str
    value: str
    type: str
    line: int
    column: int
    end_line: int
    end_column: int
    context: str = ""  # " under 'HF_TOKEN'", " in cell 3", …


# --------------------------------------------------------------------------- positions


def locate(lines: list[str], value: str, first: int, last: int, fallback: tuple[int, int]) -> tuple[int, int, int, int]:
    """Where ``value`` is written between lines ``first`` and ``last`` (1-based, inclusive).

    Parsers give the position of the scalar or word; the secret inside it is found by
    searching the file lines, which also copes with block scalars, JSON escapes around it
    and words joined across continuation lines.
    """
    needle = value.split("\n", 1)[0][:60] or value[:60]
    if needle:
        for number in range(max(first, 1), min(max(last, first), len(lines)) + 1):
            column = lines[number - 1].find(needle)
            if column >= 0:
                if "\n" in value:
                    return number, column + 1, number, column + 1 + len(needle)
                return number, column + 1, number, column + 1 + len(value)
    return fallback[0], fallback[1], fallback[0], fallback[1]


def _found(rule: str, lines: list[str], secret: Secret, first: int, last: int, fallback: tuple[int, int],
           context: str = "") -> Found:
    line, column, end_line, end_column = locate(lines, secret.value, first, last, fallback)
    return Found(rule, secret.value, secret.type, line, column, end_line, end_column, context)


def _quoted_key(key: str, value: str) -> str:
    if not key or value in key or len(key) > 60:
        return ""
    return f" under {key!r}"


# --------------------------------------------------------------------------- messages


MESSAGES = {  # {shown}: the redacted secret; {context}: where it is (key, cell, flag, image layer …)
    "SPK201": "hardcoded {shown}{context}: " + FIX_GENERAL,
    "SPK202": "secret-named env var{context} has the literal value {shown}: " + FIX_ENV,
    "SPK203": "credential {shown} {context}: " + FIX_COMMAND,
    "SPK204": ("notebook output{context} shows {shown}: rotate it, clear the outputs "
               "(jupyter nbconvert --clear-output --inplace) and stop printing secrets"),
    "SPK205": "image {context} holds {shown}: rebuild without it (BuildKit --mount=type=secret) and rotate it",
    "SPK206": ("credential file/object committed: {shown}{context}; remove it from the repository "
               "(and its history), keep only a reference, and rotate it"),
}


def _message(found: Found) -> str:
    context = found.context or ("on a command line" if found.rule == "SPK203" else "")
    return MESSAGES[found.rule].replace("{shown}", redact(found.value, found.type)).replace("{context}", context)


def to_problem(found: Found) -> Problem:
    return Problem(found.rule, found.line, found.column, _message(found), end_line=found.end_line,
                   end_column=found.end_column, key=secret_key(found.value))


def one_value_one_finding(found: Iterable[Found], taken: Iterable[tuple[int, str]] = ()) -> list[Found]:
    """Drop general (SPK201) findings of values that a specific rule reports on the same line.

    A value two recognisers read (a service-account key as file text and as a parsed object)
    is reported once: one finding per rule and position.
    """
    items = list(found)
    specific: dict[int, list[str]] = {}
    for line, value in [(item.line, item.value) for item in items if item.rule != "SPK201"] + list(taken):
        specific.setdefault(line, []).append(value)
    kept: list[Found] = []
    seen: set[tuple[str, int, str]] = set()
    places: set[tuple[str, int, int]] = set()
    for item in items:
        identity = (item.rule, item.line, item.value)
        place = (item.rule, item.line, item.column)
        if identity in seen or place in places:
            continue
        seen.add(identity)
        places.add(place)
        if item.rule == "SPK201" and _reported_on_line(item.value, specific.get(item.line, ())):
            continue
        kept.append(item)
    return kept


def _reported_on_line(value: str, values: Sequence[str]) -> bool:
    """A specific rule reported ``value`` (or a value holding it, or held by it) on the same line."""
    if not values:
        return False
    if value in values:
        return True
    return any(value in other or other in value for other in values[:MAX_SAME_LINE])


MAX_SAME_LINE = 200  # values compared per line: beyond that a line is generated text, and exact matches decide


# --------------------------------------------------------------------------- command lines


def _node_words(node: Node | None) -> list[ArgWord]:
    """argv words of a ``command``/``args`` value: a list is one word per item, a string is shell-split."""
    if node is None:
        return []
    if node.kind == "map" and len(node.value) == 1:
        node = next(iter(node.value.values()))  # Run:ai CRD ``{value: …}``
    if node.kind == "seq":
        return [ArgWord(str(item.value), item.line, item.column, item.end_line)
                for item in node.value if item.kind == "scalar" and item.value is not None]
    if node.kind == "scalar" and isinstance(node.value, str):
        return _string_words(node.value, node.line, node.column, node.end_line)
    return []


def _string_words(text: str, line: int, column: int, end_line: int) -> list[ArgWord]:
    from spikelint.adapters.common import split_words

    return [ArgWord(span.text, line, column, end_line) for span in split_words(text) if span.text]


INLINE_SCRIPT = "inside a shell -c script on the command line"


def inline_script_secrets(argv: list[ArgWord]) -> Iterator[tuple[ArgWord, Secret, str]]:
    """Everything in a ``bash -c '…'`` string is on the command line, ``export X=…`` included."""
    script = shell_script_word(argv)
    if script is not None:
        for secret in find_in_text(script.text):
            yield script, secret, INLINE_SCRIPT


def argv_secrets(argv: list[ArgWord], depth: int = 0) -> Iterator[tuple[ArgWord, Secret, str]]:
    """SPK203 candidates in an argv, following ``bash -c`` scripts."""
    for command in split_commands(argv):
        for found in command_secrets(command):
            yield found.word, found.secret, found.how
        yield from inline_script_secrets(command)
        script = shell_script_word(command)
        if script is not None and depth < MAX_SHELL_DEPTH:
            yield from script_secrets(script.text, script.line, script.end_line, depth + 1)


def script_secrets(text: str, first: int, last: int, depth: int = 0) -> Iterator[tuple[ArgWord, Secret, str]]:
    """SPK203 candidates in a shell script held in a string (positions: the lines it spans)."""
    from spikelint.documents.shell import parse_shell

    script = parse_shell(text, first)
    for nested in script.scripts():
        for command in nested.commands():
            argv = [ArgWord(word.text, first, word.column, last, word.raw) for word in command.words]
            for found in command_secrets(argv):
                yield found.word, found.secret, found.how
            yield from inline_script_secrets(argv)


def shell_document_secrets(script: Script) -> Iterator[tuple[ArgWord, Secret, str]]:
    """SPK203 candidates of a parsed launch script (its ``bash -c`` strings and heredocs included)."""
    for nested in script.scripts():
        for command in nested.commands():
            argv = [ArgWord(word.text, word.line, word.column, word.end_line, word.raw) for word in command.words]
            for found in command_secrets(argv):
                yield found.word, found.secret, found.how
            yield from inline_script_secrets(argv)


def _command_found(lines: list[str], items: Iterable[tuple[ArgWord, Secret, str]]) -> Iterator[Found]:
    for word, secret, how in items:
        yield _found("SPK203", lines, secret, word.line, word.end_line, (word.line, word.column), how)


# --------------------------------------------------------------------------- YAML / JSON / TOML


def effective_key(root: Node, path: tuple[str | int, ...]) -> str:
    """The name a scalar is written under: its map key, the ``name`` beside a ``value``, the
    key above a Run:ai ``{value: …}`` wrapper, the key of the list it is an item of."""
    keys = _last_keys(path)  # called for every scalar of a tree: only the last two keys are needed
    if not keys:
        return ""
    key = keys[-1]
    if key.lower() == "key" and len(keys) >= 2:
        return f"{keys[-2]}_key"  # ``wandb: {key: …}`` is a W&B key, ``secretKeyRef: {key: …}`` names one
    if key in VALUE_KEYS and path and path[-1] == key:
        parent = root.get(*path[:-1])
        if parent is not None and parent.kind == "map":
            for name_key in NAME_KEYS:
                name = parent.scalar(name_key)
                if isinstance(name, str) and name:
                    return name
        return keys[-2] if len(keys) >= 2 else key
    return key


def _last_keys(path: tuple[str | int, ...]) -> list[str]:
    """The last two map keys of ``path`` (sequence indexes skipped), outermost first."""
    found: list[str] = []
    for step in reversed(path):
        if isinstance(step, str):
            found.append(step)
            if len(found) == 2:
                break
    found.reverse()
    return found


def tree_general(document: Document, root: Node, lines: list[str]) -> Iterator[Found]:
    """SPK201 candidates: every string scalar, judged with the key it is written under."""
    robots = RobotMaps(root)
    for path, node in walk(root):
        if node.kind != "scalar" or not isinstance(node.value, str) or len(node.value) < MIN_SECRET:
            continue
        key = "" if is_reference_tag(node.tag) else effective_key(root, path)
        # ``!Ref LdapPassword``, ``!GetAtt X.Arn``, ``!Sub …``: an expression, not a literal
        found = find_in_text(node.value, key)
        if found and key and any(isinstance(step, str) and "encrypted" in step.lower() for step in path):
            key = ""  # SealedSecret ``encryptedData`` is ciphertext, not a secret
            found = find_in_text(node.value, key)
        for secret in found:
            if secret.type in KEYED_TYPES and robots.beside(path):
                secret = secret._replace(type=HARBOR_ROBOT)
            first = min(node.line + node.value.count("\n", 0, secret.start), node.end_line)
            yield _found("SPK201", lines, secret, first, node.end_line, (node.line, node.column),
                         _quoted_key(key, secret.value))


MIN_SECRET = 6  # characters: nothing shorter is reported (the shortest passwords counted)
HARBOR_ROBOT = "Harbor robot credentials"
KEYED_TYPES = frozenset(("password", "secret", "token", "API key"))


def is_robot_account(value: object) -> bool:
    """Harbor robot accounts are named ``robot$<project>+<name>`` (``robot_`` when so configured)."""
    return isinstance(value, str) and value.startswith(("robot$", "robot_"))


def is_reference_tag(tag: str | None) -> bool:
    """A local YAML tag (``!Ref``, ``!GetAtt``, ``!Sub``, ``!vault``): the scalar is an expression."""
    return tag is not None and tag.startswith("!") and not tag.startswith("!!")


class RobotMaps:
    """Which maps of a tree hold a robot account name, each map looked at once (not once per secret)."""

    def __init__(self, root: Node) -> None:
        self.root = root
        self.known: dict[tuple[str | int, ...], bool] = {}

    def beside(self, path: tuple[str | int, ...]) -> bool:
        """The secret sits in the same map as a robot account name (``{username: robot$…, password: …}``)."""
        if not path:
            return False
        parent_path = path[:-1]
        if parent_path not in self.known:
            parent = self.root.get(*parent_path)
            self.known[parent_path] = parent is not None and parent.kind == "map" and any(
                child.kind == "scalar" and is_robot_account(child.value) for child in parent.value.values())
        return self.known[parent_path]


def tree_commands(root: Node, lines: list[str]) -> Iterator[Found]:
    """SPK203 candidates in ``command``/``args`` (Kubernetes, Run:ai CRD/REST), CI ``script``/``run``."""
    for _, node in walk(root):
        if node.kind != "map" or not COMMAND_KEYS.intersection(node.value):
            continue
        program = next((node.value[key] for key in PROGRAM_KEYS if key in node.value), None)
        words = _node_words(program) if program is not None else [ArgWord("", node.line, node.column, node.line)]
        for key in ("args", "arguments"):
            words.extend(_node_words(node.value.get(key)))
        yield from _command_found(lines, argv_secrets(words))
        for key in ("script", "run", "before_script", "after_script", "commands"):
            for word in _node_words_as_scripts(node.value.get(key)):
                yield from _command_found(lines, script_secrets(word.text, word.line, word.end_line))


def _node_words_as_scripts(node: Node | None) -> list[ArgWord]:
    """CI ``script:``/``run:`` entries are whole shell lines, not argv words."""
    if node is None:
        return []
    items = node.value if node.kind == "seq" else [node]
    return [ArgWord(item.value, item.line, item.column, item.end_line) for item in items
            if item.kind == "scalar" and isinstance(item.value, str)]


def tree_credentials(root: Node, lines: list[str]) -> Iterator[Found]:
    for item in credential_object_secrets(root):
        node = item.node
        yield _found("SPK206", lines, item.secret, node.line, node.end_line, (node.line, node.column), f" ({item.what})")


def tree_findings(document: Document) -> Iterator[Found]:
    lines = document.lines
    if credential_file_kind(document.path) is not None:  # kaggle.json, .docker/config.json, kubeconfig …
        yield from file_credentials(document)
    for root in document.trees:
        yield from tree_credentials(root, lines)
        yield from tree_commands(root, lines)
        yield from tree_general(document, root, lines)


# --------------------------------------------------------------------------- text-like files


def text_general(document: Document, text: str | None = None, first_line: int = 1, mode: str = CONFIG) -> Iterator[Found]:
    """SPK201 candidates in raw text, with key context from the lines themselves (as ``mode`` allows)."""
    lines = document.lines
    body = document.text if text is None else text
    index: LineIndex | None = None  # not text.count() per secret: quadratic in a file of many tokens
    for secret in find_in_text(body, mode=mode):
        index = index or LineIndex(body, first_line)
        start_line = index.position(secret.start)[0]
        yield _found("SPK201", lines, secret, start_line, start_line + secret.value.count("\n"), (start_line, 1))


def file_credentials(document: Document) -> Iterator[Found]:
    lines = document.lines
    index: LineIndex | None = None
    for secret in credential_file_secrets(document.path, document.text):
        index = index or LineIndex(document.text)
        line = index.position(secret.start)[0]
        yield _found("SPK206", lines, secret, line, line, (line, 1), " (credential file)")


def text_findings(document: Document) -> Iterator[Found]:
    yield from file_credentials(document)
    yield from text_general(document, mode=text_mode(document.path, document.text))


def shell_findings(document: Document) -> Iterator[Found]:
    lines = document.lines
    if document.parsed is not None:
        yield from _command_found(lines, shell_document_secrets(document.parsed))
    yield from file_credentials(document)
    yield from text_general(document)


def python_findings(document: Document) -> Iterator[Found]:
    tree = document.parsed
    if not isinstance(tree, ast.AST):
        yield from text_general(document)
        return
    lines = document.lines
    for literal, secret in python_secrets(tree):
        first = min(literal.line + literal.value.count("\n", 0, secret.start), literal.end_line)
        yield _found("SPK201", lines, secret, first, literal.end_line, (literal.line, literal.column),
                     _quoted_key(literal.key, secret.value))


# --------------------------------------------------------------------------- Dockerfiles


def _env_pairs(keyword: str, value: str) -> list[tuple[str, str]]:
    """``ENV A=1 B="x y"`` / legacy ``ENV A some value`` / ``ARG A=1`` -> ``[(name, value)]``."""
    from spikelint.adapters.common import split_words

    words = [span.text for span in split_words(value) if not span.text.startswith("--")]
    if not words:
        return []
    if keyword == "ENV" and "=" not in words[0]:
        parts = value.strip().split(None, 1)
        return [(parts[0], parts[1].strip().strip("\"'"))] if len(parts) == 2 else []
    return [(word.partition("=")[0], word.partition("=")[2]) for word in words if "=" in word]


def env_literal(name: str, value: str) -> bool:
    """SPK202's test: a secret-named variable with a literal (not a reference or placeholder)."""
    text = value.strip()
    if not text or not is_secret_env_name(name):
        return False
    if token_secrets(text):
        return True
    if is_digit_password(text) and re.search(r"PASS|PWD", name.upper()):
        return True  # ``DB_PASSWORD: "83920147"``: a number is a password too
    if is_reference(text) or is_placeholder(text) or is_not_a_credential_literal(text):
        return False
    return not looks_like_secret_name(text)


def _env_type(name: str, value: str) -> str:
    tokens = token_secrets(value)
    return tokens[0].type if tokens else type_for_key(name, value)


def dockerfile_findings(document: Document) -> Iterator[Found]:
    lines = document.lines
    dockerfile = document.parsed
    for instruction in getattr(dockerfile, "instructions", []):
        keyword = instruction.keyword
        if keyword in ("ENV", "ARG"):
            for name, value in _env_pairs(keyword, instruction.value):
                if env_literal(name, value):
                    yield _found("SPK202", lines, Secret(value, _env_type(name, value), 0, len(value)),
                                 instruction.line, instruction.end_line, (instruction.line, instruction.column),
                                 f" {name} ({keyword})")
        elif keyword == "RUN":
            if instruction.script is not None:
                items = shell_document_secrets(instruction.script)
            else:
                items = script_secrets(instruction.value, instruction.line, instruction.end_line)
            yield from _command_found(lines, items)
            for secret in find_in_text(instruction.value):  # the whole RUN line is kept in the image history
                yield _found("SPK203", lines, secret, instruction.line, instruction.end_line,
                             (instruction.line, instruction.column), "in a RUN instruction (kept in the image history)")
    yield from text_general(document)


# --------------------------------------------------------------------------- notebooks


def notebook_findings(document: Document) -> Iterator[Found]:
    notebook = document.parsed
    if notebook is None:
        return
    lines = document.lines
    for cell in notebook.cells:
        yield from _cell_source_findings(cell, lines)
        if cell.cell_type == "code":
            yield from _cell_output_findings(cell, lines)


SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script bash", "%%script sh", "%%zsh")
PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun", "%%debug")


def _cell_source_findings(cell: Cell, lines: list[str]) -> Iterator[Found]:
    """Code cells: Python via ``ast``, ``!`` lines and ``%%bash`` cells as shell; other cells as text."""
    source = cell.source
    index = cell.index
    where = f" in cell {index}"
    texts = [str(line.value).rstrip("\n") for line in source]
    first = texts[0].strip() if texts else ""
    text_lines: Sequence[int] = range(len(texts))
    if cell.cell_type == "code" and first.startswith(SHELL_CELL_MAGICS):
        body = "\n".join(texts[1:])
        items = script_secrets(body, source[1].line if len(source) > 1 else source[0].line, source[-1].line)
        yield from (found._replace(context=f"{found.context} (cell {index})") for found in _command_found(lines, items))
    elif cell.cell_type == "code" and (not first.startswith("%%") or first.startswith(PYTHON_CELL_MAGICS)):
        for position, text in enumerate(texts):
            stripped = text.lstrip()
            if stripped.startswith("!"):
                at = source[position]
                line_items = [*script_secrets(stripped[1:], at.line, at.line),
                              *((ArgWord(stripped, at.line, at.column, at.line), secret, "on a ! shell line")
                                for secret in find_in_text(stripped[1:]))]
                yield from (found._replace(context=f"{found.context} (cell {index})")
                            for found in _command_found(lines, line_items))
        python = ["" if first.startswith("%%") and position == 0 else text for position, text in enumerate(texts)]
        yield from _cell_python(python, source, lines, where)
        text_lines = [position for position, text in enumerate(texts) if text.lstrip().startswith(("!", "%"))]
    mode = CONFIG if cell.cell_type == "code" else PROSE  # markdown cells are documentation
    for position in text_lines:
        at = source[position]
        for secret in find_in_text(texts[position], mode=mode):
            yield _found("SPK201", lines, secret, at.line, at.line, (at.line, at.column), where)


def _cell_python(texts: list[str], source: list[Located], lines: list[str], where: str) -> Iterator[Found]:
    try:
        tree = ast.parse(magic_free_source(texts))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        for position, text in enumerate(texts):
            if not text.lstrip().startswith(("!", "%")):
                at = source[position]
                for secret in find_in_text(text):
                    yield _found("SPK201", lines, secret, at.line, at.line, (at.line, at.column), where)
        return
    for literal, secret in python_secrets(tree):
        first = source[min(literal.line, len(source)) - 1]
        last = source[min(literal.end_line, len(source)) - 1]
        yield _found("SPK201", lines, secret, first.line, last.line, (first.line, first.column),
                     _quoted_key(literal.key, secret.value) + where)


OUTPUT_TEXT_MIMES = ("text/html",)


def _cell_output_findings(cell: Cell, lines: list[str]) -> Iterator[Found]:
    index = cell.index
    for output in cell.outputs:
        where = f" of cell {index} ({output.output_type})"
        texts: list[Located] = list(output.texts)
        data = output.node.get("data")
        for mime in OUTPUT_TEXT_MIMES:
            from spikelint.documents.notebook import text_lines

            texts.extend(text_lines(data.get(mime) if data is not None else None, strip_ansi=True))
        for text in texts:
            for secret in find_in_text(str(text.value)):
                yield _found("SPK204", lines, secret, text.line, text.end_line or text.line, (text.line, text.column),
                             where)


# --------------------------------------------------------------------------- the checks

COLLECTORS: dict[str, Callable[[Document], Iterator[Found]]] = {
    FileKind.YAML: tree_findings,
    FileKind.JSON: tree_findings,
    FileKind.TOML: tree_findings,
    FileKind.SHELL: shell_findings,
    FileKind.DOCKERFILE: dockerfile_findings,
    FileKind.PYTHON: python_findings,
    FileKind.NOTEBOOK: notebook_findings,
    FileKind.TEXT: text_findings,
}


def _worth_scanning(document: Document) -> bool:
    """A whole-text prefilter: most files hold nothing token-shaped and no secret-ish word."""
    text = document.text
    return bool(has_secret_hint(text) or _has_command_hint(text) or PREFILTER.search(text)
                or DETECT_SECRETS_PREFILTER.search(text))


COMMAND_HINT = lazy_regex(r"\bcurl\b|\bwget\b|\s-u\s|--user\b|://")  # ``curl -u alice:…`` holds no secret-ish word
COMMAND_LITERALS = ("curl", "wget", "-u", "://")  # one of them is in every COMMAND_HINT match


def _has_command_hint(text: str) -> bool:
    return any(literal in text for literal in COMMAND_LITERALS) and COMMAND_HINT.search(text) is not None


def workload_env_values(document: Document, ctx: CheckContext) -> list[tuple[int, str]]:
    """``(line, value)`` of env literals SPK202 reports through the workload model (for de-duplication)."""
    if document.kind not in (FileKind.YAML, FileKind.JSON, FileKind.SHELL):
        return []
    try:
        from spikelint.adapters import workloads_in

        workloads = workloads_in(document, ctx.config)
    except Exception:  # noqa: BLE001 - the adapters report their own failures; here it only costs a duplicate
        return []
    return [(found.line, found.value) for workload in workloads for found in workload_env_findings(workload, document)]


@check(*DOCUMENT_RULES, scope="document")
def secrets_in_document(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Every secret rule that reads a document directly (SPK202 here only for Dockerfiles)."""
    collector = COLLECTORS.get(document.kind)
    if collector is None or not document.text or not _worth_scanning(document):
        return
    reporting = _selected_rules(ctx)
    found = [item for item in collector(document) if item.rule in reporting]
    if not found:
        return
    wants_env = "SPK202" in reporting and any(item.rule == "SPK201" for item in found)
    taken = workload_env_values(document, ctx) if wants_env else []
    for item in one_value_one_finding(found, taken):
        yield to_problem(item)


def _selected_rules(ctx: CheckContext) -> frozenset[str]:
    """The secret rules this run reports: a value only steps aside for a rule that will report it."""
    from spikelint.config import selected

    return frozenset(rule for rule in ("SPK201", "SPK202", "SPK203", "SPK204", "SPK205", "SPK206")
                     if selected(rule, ctx.config))


def workload_env_findings(workload: Workload, document: Document) -> Iterator[Found]:
    lines = document.lines
    for container in workload.containers:
        robot = any(variable.value is not None and is_robot_account(variable.value.value) for variable in container.env)
        for variable in container.env:
            found = env_var_finding(variable, lines)
            if found is not None:
                yield found._replace(type=HARBOR_ROBOT) if robot and found.type in KEYED_TYPES else found


def env_var_finding(variable: EnvVar, lines: list[str]) -> Found | None:
    if variable.value is None or variable.reference:
        return None
    name = str(variable.name.value)
    value = variable.value.value
    if not isinstance(value, str) or not env_literal(name, value):
        return None
    where = variable.value
    secret = Secret(value, _env_type(name, value), 0, len(value))
    return _found("SPK202", lines, secret, where.line, where.end_line or where.line, (where.line, where.column),
                  f" {name}")


@check("SPK202", scope="workload")
def secret_env_literals(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Kubernetes ``env[].value``, Run:ai CRD/REST env values and ``runai -e NAME=value``."""
    seen: set[tuple[int, str]] = set()
    for found in workload_env_findings(workload, document):
        if (found.line, found.value) not in seen:
            seen.add((found.line, found.value))
            yield to_problem(found)


@check("SPK207", scope="document", kinds=(FileKind.NOTEBOOK,))
def notebook_outputs_committed(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """One finding per notebook, at the first output of the first code cell that has outputs."""
    notebook = document.parsed
    if notebook is None:
        return
    with_outputs = [cell for cell in notebook.cells if cell.cell_type == "code" and cell.outputs]
    if not with_outputs:
        return
    first = with_outputs[0].outputs[0].node
    yield Problem("SPK207", first.line, first.column,
                  f"notebook committed with outputs in {len(with_outputs)} code cell(s), first in cell "
                  f"{with_outputs[0].index}: outputs can expose prompts, data samples, personal data or secrets; "
                  f"clear them (jupyter nbconvert --clear-output --inplace) or install nbstripout",
                  key=f"outputs:{document.path}")


@check("SPK205", scope="document", kinds=(FileKind.IMAGE,))
def secrets_in_image(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Secrets in an image tarball's config and credential files in its layers."""
    from spikelint.documents.image import ImageContents

    image = document.parsed
    if not isinstance(image, ImageContents):
        return
    for item in image_findings(image):
        yield to_problem(item)


def image_findings(image: ImageContents) -> Iterator[Found]:
    from spikelint.secrets.image_scan import image_secrets

    for secret, where in image_secrets(image):
        yield Found("SPK205", secret.value, secret.type, 1, 1, 1, 1, where)

