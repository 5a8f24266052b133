"""SPK205 in a Dockerfile: the places where a build writes a credential into the image it produces.

Three ways, each the Dockerfile side of what SPK205 finds in a ``docker save`` tarball:

- ``ENV NAME=$HF_TOKEN`` (or ``LABEL``) of a build argument: the value lands in the image
  config's ``Env``/``Labels`` (``docker inspect``);
- ``RUN … $HF_TOKEN …`` of a build argument: ``docker history`` keeps every build argument
  of the stage beside each ``RUN`` (``|1 HF_TOKEN=… /bin/sh -c …``);
- ``COPY .netrc /root/.netrc`` (``.git-credentials``, ``.docker/config.json``, ``id_rsa``,
  ``.aws/credentials``, private ``*.pem``/``*.key``, a kubeconfig, a ``.ssh`` folder …): the
  file lands in a layer, and a later ``RUN rm`` only hides it.

Why SPK205 (secret-in-image) and not another rule: SPK202 is about a literal written in the
file, and ``$HF_TOKEN`` is a reference there (it fires on ``ARG HF_TOKEN=hf_…`` itself);
SPK203 reads literals on command lines and lets env references pass; SPK206 is about a
credential committed to the repository, and a ``COPY`` source is usually git-ignored or written
by CI. What leaks here is the image: the same three places SPK205 reads in a tarball, found
before the image is built. An ``ARG`` that no ``ENV``, ``LABEL`` or ``RUN`` refers to is not
reported, nor a ``RUN --mount=type=secret,…,env=NAME`` (BuildKit's way: nothing is kept).
Messages name the build argument or the file, never a value.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Iterator

from spikelint.checks.secrets.found import Found
from spikelint.documents.dockerfile import Dockerfile
from spikelint.documents.dockerfile import Instruction
from spikelint.secrets.context import is_not_a_credential_literal
from spikelint.secrets.context import is_secret_env_name
from spikelint.secrets.credentials import TEMPLATE_SUFFIXES
from spikelint.secrets.credentials import credential_kind_by_name
from spikelint.util.lazyre import lazy_regex

REFERENCE = lazy_regex(r"(?<!\\)\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")
# a shell assignment (``HF_TOKEN=$(cat /run/secrets/hf) cmd``, ``export X=…``), not ``echo "HF_TOKEN=$HF_TOKEN"``
ASSIGNED = lazy_regex(r"(?:^|[\s;&|(])(?:export\s+|declare\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)=")
BUILD_ARGUMENT = "build argument"
CREDENTIAL_FILE = "credential file"


def _references(text: str) -> Iterator[tuple[str, int]]:
    for match in REFERENCE.finditer(text):
        yield match.group("braced") or match.group("plain"), match.start()


def _may_hold_a_secret(default: str | None) -> bool:
    """A build argument's default: none, empty or a placeholder is what ``--build-arg`` fills in."""
    return not (default and is_not_a_credential_literal(default))


def _at(identity: str, type_: str, line: int, column: int, message: str) -> Found:
    """A finding with no span: the engine masks a secret finding's span everywhere in the output,
    and a build argument's name or a file name is no secret to mask."""
    return Found("SPK205", identity, type_, line, column, line, column, message=message)


def _secret_id(name: str) -> str:
    return name.strip(".").lower().replace(".", "_").replace("/", "_") or "secret"


# --------------------------------------------------------------------------- build arguments


def _stage_args(instruction: Instruction, declared: dict[str, str | None]) -> None:
    for name, default in instruction.pairs:
        declared[name.value] = default.value if default is not None else None


def _baked(instruction: Instruction, declared: dict[str, str | None], persisted: set[str]) -> Iterator[Found]:
    """``ENV NAME=$ARG`` / ``LABEL k=${ARG}``: the build argument is written into the image config."""
    where = "config Env" if instruction.keyword == "ENV" else "config labels"
    for name, value in instruction.pairs:
        if value is None:
            continue
        for reference, _ in _references(value.value):
            if reference not in declared or not _may_hold_a_secret(declared[reference]):
                continue
            if not (is_secret_env_name(reference) or is_secret_env_name(name.value)):
                continue
            if instruction.keyword == "ENV":
                persisted.update((name.value, reference))  # in the config already: a RUN adds nothing new
            message = (f"{instruction.keyword} {name.value} bakes build argument {reference} into the image "
                       f"{where} (docker inspect shows it to everyone who can pull the image): mount it for the RUN "
                       f"that needs it (RUN --mount=type=secret,id={_secret_id(reference)} …) and rotate any value "
                       f"built in")
            yield _at(f"build-arg:{reference}", BUILD_ARGUMENT, value.line, value.column, message)
            break


def _secret_mount_names(instruction: Instruction) -> set[str]:
    """``--mount=type=secret,id=hf,env=HF_TOKEN``: names the mount itself provides."""
    names: set[str] = set()
    for mount in instruction.flags.get("mount", "").split("\n"):
        fields: dict[str, str] = {}
        for part in mount.split(","):
            key, _, value = part.partition("=")
            fields[key.strip().lower()] = value.strip()
        if fields.get("type") == "secret" and fields.get("env"):
            names.add(fields["env"])
    return names


def _run_texts(instruction: Instruction) -> Iterator[tuple[str, int, int, bool]]:
    """(text, line, column, located by ``instruction.locate``) of the RUN line and its heredoc bodies."""
    yield instruction.value, instruction.line, instruction.column, True
    for body, first_line in instruction.heredocs:
        yield body, first_line, 1, False


def _used_in_run(instruction: Instruction, secret_args: set[str], persisted: set[str]) -> Iterator[Found]:
    """``RUN … $HF_TOKEN …``: the step's history entry keeps the build argument's value."""
    texts = list(_run_texts(instruction))
    skip = persisted | _secret_mount_names(instruction)
    skip.update(name for text, *_ in texts for name in ASSIGNED.findall(text))
    reported: set[str] = set()
    for text, first_line, _, inline in texts:
        for name, offset in _references(text):
            if name not in secret_args or name in skip or name in reported:
                continue
            reported.add(name)
            if inline:
                line, column = instruction.locate(offset)
            else:
                line, column = first_line + text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset)
            message = (f"RUN uses build argument {name}: docker history keeps its value beside this step "
                       f"(|1 {name}=…); pass it as a BuildKit secret instead (RUN --mount=type=secret,"
                       f"id={_secret_id(name)} …, docker buildx build --secret id={_secret_id(name)},env={name}) "
                       f"and rotate any value built in")
            yield _at(f"build-arg:{name}", BUILD_ARGUMENT, line, column, message)


def build_argument_findings(dockerfile: Dockerfile) -> Iterator[Found]:
    declared: dict[int, dict[str, str | None]] = {}
    persisted: dict[int, set[str]] = {}
    for instruction in dockerfile.instructions:
        if instruction.stage < 0:
            continue  # ARGs before the first FROM reach only FROM lines
        stage_declared = declared.setdefault(instruction.stage, {})
        keyword = instruction.keyword
        if keyword == "ARG":
            _stage_args(instruction, stage_declared)
        elif keyword in ("ENV", "LABEL") and stage_declared:
            yield from _baked(instruction, stage_declared, persisted.setdefault(instruction.stage, set()))
        elif keyword == "RUN" and stage_declared:
            secret_args = {name for name, default in stage_declared.items()
                           if is_secret_env_name(name) and _may_hold_a_secret(default)}
            if secret_args:
                yield from _used_in_run(instruction, secret_args, persisted.setdefault(instruction.stage, set()))


# --------------------------------------------------------------------------- credential files


def _copied(instruction: Instruction) -> Iterator[tuple[str, str, int, int]]:
    """(source, path in the image, line, column) of each source of a COPY/ADD."""
    arguments = instruction.arguments
    if len(arguments) < 2 or instruction.heredocs:
        return
    destination = arguments[-1][0]
    into_folder = destination.endswith("/") or len(arguments) > 2
    for source, line, column in arguments[:-1]:
        if "://" in source or any(char in source for char in "*?["):
            continue  # a download (ADD https://…) or a pattern: nothing known by name
        name = PurePosixPath(source.rstrip("/")).name
        target = f"{destination.rstrip('/')}/{name}" if into_folder else destination
        yield source, target, line, column


FOLDER_FILES = {".aws": "credentials", ".kube": "config"}  # what a secret mount of the folder's key file targets


def _mount_instead(source: str, target: str, kind: str) -> str:
    """BuildKit's way for the one RUN that needs it: an SSH agent for SSH keys, a secret mount for the rest."""
    name = PurePosixPath(source.rstrip("/")).name
    if name == ".ssh" or (kind == "private-key" and name.startswith(("id_", "identity"))):
        return "forward an SSH agent to the RUN that needs it (RUN --mount=type=ssh …, docker buildx build --ssh default)"
    if kind == "folder":
        target = f"{target.rstrip('/')}/{FOLDER_FILES.get(name, '…')}"
    identifier = _secret_id(PurePosixPath(target).name if credential_kind_by_name(target) else name)
    return f"mount it for the RUN that needs it (RUN --mount=type=secret,id={identifier},target={target} …)"


def credential_copy_findings(dockerfile: Dockerfile) -> Iterator[Found]:
    """``COPY .netrc /root/.netrc``: a credential file (judged by its name) in a layer of the image."""
    for instruction in dockerfile.instructions:
        if instruction.keyword not in ("COPY", "ADD"):
            continue
        for source, target, line, column in _copied(instruction):
            if PurePosixPath(source.rstrip("/")).name.lower().endswith(TEMPLATE_SUFFIXES):
                continue  # ``COPY .netrc.example /root/.netrc``: a template, filled in elsewhere
            kind = credential_kind_by_name(source) or credential_kind_by_name(target)
            if kind is None:
                continue
            message = (f"{instruction.keyword} puts credential {'folder' if kind == 'folder' else 'file'} {source} "
                       f"into an image layer (everyone who can pull the image can read it; a later RUN rm only "
                       f"hides it): {_mount_instead(source, target, kind)} and rotate it")
            yield _at(f"copy:{source}", CREDENTIAL_FILE, line, column, message)


def image_leak_findings(dockerfile: object) -> Iterator[Found]:
    if not isinstance(dockerfile, Dockerfile):
        return
    yield from build_argument_findings(dockerfile)
    yield from credential_copy_findings(dockerfile)
