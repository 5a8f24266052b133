"""Credentials passed on a command line (SPK203): ``--token X``, ``-p X`` for known clients,
``Authorization:`` headers, ``https://user:pass@`` URLs, inline ``key=…,secret=…`` option
lists and tokens given as plain arguments.

Commands arrive as argv words with positions, whatever wrote them: a launch script, a
workload's ``command``/``args``, a Dockerfile ``RUN`` or a notebook ``!`` line.
"""

from __future__ import annotations

import re
from typing import Iterator
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex
from spikelint.util.pathnames import base_name
from spikelint.secrets.context import is_documented_public_value
from spikelint.secrets.context import KeyClass
from spikelint.secrets.context import classify_key
from spikelint.secrets.context import is_not_a_credential_literal
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_reference
from spikelint.secrets.context import literal_secret_under_key
from spikelint.secrets.context import looks_like_secret_name
from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import token_secrets
from spikelint.secrets.detectors import type_for_key
from spikelint.secrets.detectors import wandb_login_key
from spikelint.secrets.text import AUTH_HEADER
from spikelint.secrets.text import API_KEY_HEADER
from spikelint.secrets.text import find_in_text


class ArgWord(NamedTuple):
    """One argv word: unquoted text and where it was written (``raw`` as written, when known)."""

    text: str
    line: int
    column: int
    end_line: int
    raw: str = ""


class CommandSecret(NamedTuple):
    word: ArgWord
    secret: Secret  # offsets within ``word.text``
    how: str  # what the command line does with it, for the message


SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "ash"))
WRAPPERS = frozenset(("sudo", "env", "time", "nohup", "exec", "command", "xargs", "stdbuf", "timeout", "nice"))
# ``-p PASSWORD`` means a password only for these programs (elsewhere it is a port, a path, a parent …)
PASSWORD_P_CLIENTS = frozenset(("sshpass", "mongo", "mongosh", "mongodump", "mongorestore"))
# … and for these only in their ``login`` subcommand (``docker run -p`` publishes a port)
LOGIN_P_CLIENTS = frozenset(("docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane", "regctl",
                             "runai", "az", "cf"))
ATTACHED_P_CLIENTS = frozenset(("mysql", "mariadb", "mysqladmin", "mysqldump"))
USER_PASS_FLAGS = frozenset(("-u", "--user", "--creds", "--src-creds", "--dest-creds", "--proxy-user", "-U"))
USER_PASS_CLIENTS = frozenset(("curl", "skopeo", "wget"))
# programs whose ``--secret`` takes ``id=NAME,src=…``: a mount of a secret, never its value
BUILDKIT_CLIENTS = frozenset(("docker", "podman", "buildah", "nerdctl", "buildctl", "depot", "earthly"))
# options whose value is ``NAME=value`` (an env var, a build arg, a chart value, a Secret literal; a submitter's
# ``--secret HF_TOKEN=team_HF_TOKEN`` names the stored secret an env var is filled from)
ASSIGNING_FLAGS = frozenset(("-e", "--env", "--environment", "--environment-variable", "--build-arg", "--set",
                             "--set-string", "--from-literal", "--secret-env", "--extra-vars", "-var", "--var",
                             "--conf", "--config-override", "--label", "-l", "--opt", "--secret", "--secrets"))
RUNAI_ENV_FLAGS = frozenset(("-e", "--environment", "--environment-variable", "--env"))
OPTION_LIST_FLAGS = frozenset(("--s3", "--git-sync", "--nfs", "--pvc", "--new-pvc", "--host-path", "--secret-volume",
                               "--configmap-volume", "--data-source", "--git", "--env-my-credentials"))
_OPTION_PAIR = lazy_regex(r"(?:^|,)(?P<key>[A-Za-z][\w-]*)=(?P<value>[^,]*)")
_NAME_VALUE = lazy_regex(r"^(?P<name>[A-Za-z_][\w.-]*)=(?P<value>.+)$", re.DOTALL)
ASSIGNING_BUILTINS = frozenset(("export", "declare", "local", "readonly", "typeset", "set", "setenv"))
SEPARATORS = frozenset(("&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "{", "}", "then", "do", "else", "!"))


def program_name(word: str) -> str:
    return base_name(word)


def _literal_for_flag(value: str, kind: KeyClass) -> bool:
    if not value or value.startswith("-") or is_reference(value):
        return False
    if token_secrets(value):
        return True
    if is_placeholder(value):
        return False
    if is_not_a_credential_literal(value):
        return False
    return literal_secret_under_key(value, kind) or bool(token_secrets(value))


def _flag_value_secret(flag: str, value: str, word: ArgWord, offset: int, shown: str = "",
                       type_: str = "") -> Iterator[CommandSecret]:
    """``flag`` names the value (``--token``, or ``password`` for ``-p``); ``shown`` is what the message quotes."""
    name = flag.lstrip("-")
    kind = classify_key(name)
    how = f"passed with {shown or flag}"
    if not kind.secret or not _literal_for_flag(value, kind):
        return
    tokens = token_secrets(value)
    if tokens:
        for token in tokens:
            yield CommandSecret(word, token._replace(start=token.start + offset, end=token.end + offset), how)
        return
    yield CommandSecret(word, Secret(value, type_ or type_for_key(name, value), offset, offset + len(value)), how)


def _assignment_secret(text: str, word: ArgWord, offset: int, flag: str) -> Iterator[CommandSecret]:
    """``NAME=value`` given to ``-e``/``--build-arg``/``--set``: a secret-named NAME with a literal value."""
    match = _NAME_VALUE.match(text)
    if match is None:
        return
    name = match.group("name").rsplit(".", 1)[-1]
    yield from _flag_value_secret(name, match.group("value"), word, offset + match.start("value"),
                                  f"{flag} {match.group('name')}=…")


def _option_list_secrets(text: str, word: ArgWord, offset: int, flag: str) -> Iterator[CommandSecret]:
    """``bucket=b,key=AKIA…,secret=…`` / ``source=…,password=…``: inline credentials in an option list."""
    for match in _OPTION_PAIR.finditer(text):
        key, value = match.group("key"), match.group("value")
        kind = classify_key(key) if key.lower() not in ("key", "accesskey", "access-key") else classify_key("access_key")
        if not kind.secret or looks_like_secret_name(value) or not _literal_for_flag(value, kind):
            continue
        if key.lower() == "secret" and re.fullmatch(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?", value) and not \
                token_secrets(value) and len(value) < 32:
            continue  # a Kubernetes Secret's name
        start = offset + match.start("value")
        yield CommandSecret(word, Secret(value, type_for_key(key, value), start, start + len(value)),
                            f"inline in {flag} {key}=…")


def _header_secrets(word: ArgWord) -> Iterator[CommandSecret]:
    for regex in (AUTH_HEADER, API_KEY_HEADER):
        for match in regex.finditer(word.text):
            value = match.group("value")
            if is_placeholder(value) or is_reference(value) or is_documented_public_value(value):
                continue
            tokens = token_secrets(value)
            type_ = tokens[0].type if tokens else "token in Authorization header"
            if tokens or literal_secret_under_key(value, classify_key("token")):
                yield CommandSecret(word, Secret(value, type_, match.start("value"), match.end("value")),
                                    "in an HTTP header")


def command_secrets(argv: list[ArgWord]) -> Iterator[CommandSecret]:
    """Credentials on one simple command line (``argv[0]`` is the program)."""
    start = 0
    while start < len(argv) and (_NAME_VALUE.match(argv[start].text) or program_name(argv[start].text) in WRAPPERS):
        start += 1
    if start >= len(argv):
        return
    program = program_name(argv[start].text)
    words = argv[start:]
    reported: set[int] = _workload_env_words(program, words)
    script = shell_script_word(argv)
    if script is not None:
        reported.add(id(script))  # read as a script of its own by the caller
    for found in _command_secrets(program, words):
        reported.add(id(found.word))
        yield found
    for word in words[1:]:
        if id(word) in reported or _NAME_VALUE.match(word.text) and program in ASSIGNING_BUILTINS:
            continue
        for secret in token_secrets(word.text):
            yield CommandSecret(word, secret, "passed as a command-line argument")


def _positional_secret(name: str, value: ArgWord) -> Iterator[CommandSecret]:
    """``aws configure set aws_secret_access_key X``, ``git config github.token X``: a secret-named word, then its value."""
    if not _PLAIN_NAME.match(name):
        return  # ``-v $(pwd)/out:/layer IMAGE``: a volume, then an image, not a name and its value
    kind = classify_key(name.rsplit(".", 1)[-1])
    text = value.text
    if not kind.secret or text.startswith("-") or is_reference(text) or token_secrets(text):
        return  # token shapes are reported by the argument scan
    if is_placeholder(text) or is_not_a_credential_literal(text) or looks_like_secret_name(text):
        return
    if literal_secret_under_key(text, kind, prose=True):
        yield CommandSecret(value, Secret(text, type_for_key(name, text), 0, len(text)), f"passed after {name}")


_PLAIN_NAME = lazy_regex(r"^[A-Za-z_][\w.-]{0,80}$")


def _workload_env_words(program: str, words: list[ArgWord]) -> set[int]:
    """``runai … -e NAME=value``: workload env vars, reported by SPK202 through the workload model."""
    if program != "runai":
        return set()
    skipped: set[int] = set()
    for word, following in zip(words, words[1:]):
        if word.text in RUNAI_ENV_FLAGS or word.text == "--env-secret":
            skipped.add(id(following))
        elif word.text.partition("=")[0] in RUNAI_ENV_FLAGS:
            skipped.add(id(word))
    return skipped


def _command_secrets(program: str, words: list[ArgWord]) -> Iterator[CommandSecret]:
    subcommand = next((word.text for word in words[1:] if not word.text.startswith("-")), "")
    index = 1
    while index < len(words):
        word = words[index]
        text = word.text
        following = words[index + 1] if index + 1 < len(words) else None
        index += 1
        yield from _header_secrets(word)
        if not text.startswith("-") or text in ("-", "--"):
            if program == "wandb" and subcommand == "login" and wandb_login_key(text):
                yield CommandSecret(word, Secret(text, "Weights & Biases API key", 0, len(text)), "passed to wandb login")
            elif following is not None and " " not in text and "=" not in text:
                yield from _positional_secret(text, following)
            continue
        flag, has_value, inline = text.partition("=")
        value_word = word if has_value else following
        value = inline if has_value else (following.text if following is not None else "")
        offset = len(flag) + 1 if has_value else 0
        if value_word is None:
            continue
        if flag == "--secret" and program in BUILDKIT_CLIENTS:
            index += 0 if has_value else 1  # ``--secret id=NAME[,src=…]``: BuildKit's safe way to pass one
            continue
        if flag in OPTION_LIST_FLAGS or (program == "runai" and "=" in value and "," in value):
            yield from _option_list_secrets(value, value_word, offset, flag)
        elif flag in ASSIGNING_FLAGS and "=" in value:
            if not (program == "runai" and flag in RUNAI_ENV_FLAGS):
                yield from _assignment_secret(value, value_word, offset, flag)
        elif flag == "-p" and not has_value and (program in PASSWORD_P_CLIENTS or (
                program in LOGIN_P_CLIENTS and "login" in (word.text for word in words[1:index]))):
            user = next((words[position + 1].text for position in range(1, len(words) - 1)
                         if words[position].text in ("-u", "--username")), "")
            robot = "Harbor robot credentials" if user.startswith(("robot$", "robot_")) else ""
            yield from _flag_value_secret("password", value, value_word, offset, "-p", robot)
        elif flag.startswith("-p") and not flag.startswith("--") and program in ATTACHED_P_CLIENTS and len(flag) > 2:
            yield from _flag_value_secret("password", flag[2:], word, 2, "-p")
        elif flag in USER_PASS_FLAGS and program in USER_PASS_CLIENTS and ":" in value:
            user, _, password = value.partition(":")
            if password:
                yield from _flag_value_secret("password", password, value_word, offset + len(user) + 1,
                                              f"{flag} user:…")
            else:  # ``-u TOKEN:``: an API token as the user name, no password
                yield from _flag_value_secret("token", user, value_word, offset, f"{flag} TOKEN:")
        else:
            yield from _flag_value_secret(flag, value, value_word, offset)
        if not has_value and following is not None and not following.text.startswith("-") \
                and classify_key(flag.lstrip("-")).secret:
            index += 1


def split_commands(words: list[ArgWord]) -> list[list[ArgWord]]:
    """Cut a word list at ``&&``, ``;``, ``|`` … (a word ending in ``;`` ends its command)."""
    commands: list[list[ArgWord]] = []
    current: list[ArgWord] = []
    for word in words:
        if word.text in SEPARATORS:
            if current:
                commands.append(current)
            current = []
            continue
        if word.text.endswith(";") and len(word.text) > 1 and not word.raw.endswith(("';", '";')):
            current.append(word._replace(text=word.text[:-1]))
            commands.append(current)
            current = []
            continue
        current.append(word)
    if current:
        commands.append(current)
    return commands


def shell_script_word(argv: list[ArgWord]) -> ArgWord | None:
    """The script of ``bash -c '…'`` / ``sh -lc "…"``, also as the container command of
    ``runai … -- bash -c '…'`` or ``docker run img bash -c '…'`` (``None`` when there is none)."""
    for start, word in enumerate(argv):
        if program_name(word.text) not in SHELLS:
            continue
        for index in range(start + 1, len(argv) - 1):
            flag = argv[index].text
            if not flag.startswith("-") or flag.startswith("--"):
                break
            if "c" in flag:
                return argv[index + 1]
    return None


def text_secrets_in_words(words: list[ArgWord]) -> Iterator[tuple[ArgWord, Secret]]:
    """Secrets in words that are not command-line credentials (assignments, heredoc-ish text)."""
    for word in words:
        for secret in find_in_text(word.text):
            yield word, secret
