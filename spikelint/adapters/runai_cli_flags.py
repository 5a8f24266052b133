"""What each ``runai … submit`` flag sets on the submit: image, GPUs, env, mounts, lifecycle, labels.

One handler per flag (v1 and v2 spellings share theirs); a flag whose value cannot be
resolved is recorded as unresolved rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Callable

from spikelint.adapters.common import as_int
from spikelint.adapters.common import parse_duration
from spikelint.adapters.common import to_number
from spikelint.util.lazyre import lazy_regex
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Volume
from spikelint.adapters.runai_cli_words import Value

SECRET_PREFIX = "SECRET:"
ENV_NAME = lazy_regex(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass
class Submit:
    """What the flags of one ``runai … submit`` said."""

    klass: str
    anchor: Located
    name: Located | None = None
    image: Located | None = None
    gpus: Located | None = None
    portion: Located | None = None
    master_gpus: Located | None = None
    env: list[EnvVar] = field(default_factory=list)
    mounts: list[Mount] = field(default_factory=list)
    working_dir: Located | None = None
    preemptible: bool | None = None
    priority: Located | None = None
    retries: Located | None = None
    grace: Located | None = None
    ttl: Located | None = None
    workers: Located | None = None
    parallelism: Located | None = None
    no_master: bool = False
    labels: dict[str, Located] = field(default_factory=dict)
    annotations: dict[str, Located] = field(default_factory=dict)
    annotation_keys: dict[str, Located] = field(default_factory=dict)
    replace_command: bool = False
    words: list[Located] = field(default_factory=list)  # after ``--``
    legacy_command: list[Located] = field(default_factory=list)
    legacy_args: list[Located] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- key=value lists


def key_values(value: Value) -> dict[str, Located]:
    """``claimname=c,path=/ckpt,ro`` -> ``{claimname: …, path: …, ro: …}`` (keys lowercased)."""
    parts: dict[str, Located] = {}
    position = 0
    for piece in value.text.split(","):
        start = position
        position += len(piece) + 1
        if "=" in piece:
            key, _, _ = piece.partition("=")
            begin = start + len(key) + 1
            parts[key.strip().lower()] = value.part(begin, start + len(piece))
        elif piece.strip():
            parts[piece.strip().lower()] = value.part(start, start + len(piece))
    return parts


def env_pair(value: Value) -> tuple[Located, Located] | None:
    """``NAME=value`` -> (name, value) located; ``None`` when there is no ``=``."""
    name, equals, rest = value.text.partition("=")
    if not equals or not ENV_NAME.match(name):
        return None
    return value.part(0, len(name)), value.part(len(name) + 1, len(value.text))


# --------------------------------------------------------------------------- flag handlers


def _image(submit: Submit, value: Value) -> None:
    submit.image = value.where._replace(value=value.text)


def _gpus(submit: Submit, value: Value) -> None:
    number = to_number(value.text)
    if number is not None:
        submit.gpus = value.where._replace(value=as_int(number))


def _portion(submit: Submit, value: Value) -> None:
    number = to_number(value.text)
    if number is not None:
        submit.portion = value.where._replace(value=as_int(number))


def _master_gpus(submit: Submit, value: Value) -> None:
    number = to_number(value.text)
    if number is not None:
        submit.master_gpus = value.where._replace(value=as_int(number))


def _env(submit: Submit, value: Value) -> None:
    pair = env_pair(value)
    if pair is None:
        submit.unresolved.append(f"environment asset {value.text!r}")
        return
    name, literal = pair
    if str(literal.value).startswith(SECRET_PREFIX):
        submit.env.append(EnvVar(name, None, "runai-secret"))
    else:
        submit.env.append(EnvVar(name, literal if literal.value != "" else None))


def _env_reference(reference: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        pair = env_pair(value)
        if pair is not None:
            submit.env.append(EnvVar(pair[0], None, reference))
            return
        parts = key_values(value)
        if "name" in parts:
            submit.env.append(EnvVar(parts["name"], None, reference))
    return handle


def _mount(submit: Submit, path: Located | None, source: str, persistent: bool, location: Located,
           claim: str | None = None, read_only: bool = False) -> None:
    if path is None or not str(path.value):
        return
    submit.mounts.append(Mount(path, Volume(claim or str(path.value), source, persistent, location, claim), read_only))


def _legacy_pvc(submit: Submit, value: Value) -> None:
    """v1 ``--pvc NAME:/mnt[:ro]`` / ``[SC]:SIZE:/mnt[:ro]``, or the key=value form."""
    if "=" in value.text:
        _existing_pvc(submit, value)
        return
    pieces = value.text.split(":")
    offset = 0
    path = None
    for piece in pieces:
        if piece.startswith("/") and path is None:
            path = value.part(offset, offset + len(piece))
        offset += len(piece) + 1
    read_only = pieces[-1].lower() == "ro"
    claim = pieces[0] if len(pieces) == 2 or (len(pieces) == 3 and read_only) else None
    _mount(submit, path, "pvc", True, value.where, claim or None, read_only)


def _existing_pvc(submit: Submit, value: Value) -> None:
    parts = key_values(value)
    path = parts.get("path") or parts.get("mount") or parts.get("mountpath")
    ephemeral = "ephemeral" in parts
    claim = parts.get("claimname") or parts.get("name")
    _mount(submit, path, "ephemeral-pvc" if ephemeral else "pvc", not ephemeral, value.where,
           str(claim.value) if claim else None, "ro" in parts or "readonly" in parts)


def _volume(submit: Submit, value: Value) -> None:
    """v1 ``-v SRC:DST[:ro][:nfs-host]``: a host (or NFS) directory."""
    pieces = value.text.split(":")
    if len(pieces) < 2:
        return
    start = len(pieces[0]) + 1
    path = value.part(start, start + len(pieces[1]))
    nfs = len(pieces) >= 4 or (len(pieces) == 3 and pieces[2].lower() not in ("ro", "rw"))
    _mount(submit, path, "nfs" if nfs else "hostPath", nfs, value.where, pieces[0],
           len(pieces) > 2 and pieces[2].lower() == "ro")


def _keyed(source: str, persistent: bool, path_keys: tuple[str, ...], claim_keys: tuple[str, ...] = ()
           ) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        parts = key_values(value)
        path = next((parts[key] for key in path_keys if key in parts), None)
        claim = next((str(parts[key].value) for key in claim_keys if key in parts), None)
        read_only = source in ("configMap", "secret") or "ro" in parts or "readonly" in parts
        _mount(submit, path, source, persistent, value.where, claim, read_only)
    return handle


def _working_dir(submit: Submit, value: Value) -> None:
    submit.working_dir = value.where._replace(value=value.text)


def _preemptibility(submit: Submit, value: Value) -> None:
    lowered = value.text.strip().lower()
    if lowered in ("preemptible", "non-preemptible"):
        submit.preemptible = lowered == "preemptible"


def _priority(submit: Submit, value: Value) -> None:
    submit.priority = value.where._replace(value=value.text)


def _converted(attribute: str, convert: Callable[[str], float | None]) -> Callable[[Submit, Value], None]:
    """Sets ``attribute`` to the converted value of the flag; a value that does not convert is ignored."""
    def handle(submit: Submit, value: Value) -> None:
        number = convert(value.text)
        if number is not None:
            setattr(submit, attribute, value.where._replace(value=as_int(number)))
    return handle


def _number(attribute: str) -> Callable[[Submit, Value], None]:
    return _converted(attribute, to_number)


def _workers(submit: Submit, value: Value) -> None:
    """``--workers N``; a count that cannot be resolved still means at least one worker."""
    number = to_number(value.text)
    submit.workers = value.where._replace(value=as_int(number) if number is not None else 1)


def _duration(attribute: str) -> Callable[[Submit, Value], None]:
    return _converted(attribute, parse_duration)


def _grace(submit: Submit, value: Value) -> None:
    """``--termination-grace-period``: a duration; 0 means the Kubernetes default (30s)."""
    seconds = parse_duration(value.text)
    if seconds:
        submit.grace = value.where._replace(value=as_int(seconds))


def _pairs(attribute: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        target: dict[str, Located] = getattr(submit, attribute)
        position = 0
        for piece in value.text.split(","):
            start = position
            position += len(piece) + 1
            key, equals, _ = piece.partition("=")
            if not key.strip():
                continue
            target[key.strip()] = (value.part(start + len(key) + 1, start + len(piece)) if equals
                                   else value.part(start, start + len(piece))._replace(value=""))
            if attribute == "annotations":
                submit.annotation_keys[key.strip()] = value.part(start, start + len(key))
    return handle


def _name(submit: Submit, value: Value) -> None:
    submit.name = value.where._replace(value=value.text)


def _legacy_words(attribute: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        getattr(submit, attribute).append(value.where._replace(value=value.text))
    return handle


def _unresolved(kind: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        submit.unresolved.append(f"{kind} {value.text!r}")
    return handle


def ignore_flag(submit: Submit, value: Value) -> None:
    return None


def _set(attribute: str, value: object) -> Callable[[Submit], None]:
    def handle(submit: Submit) -> None:
        setattr(submit, attribute, value)
    return handle


# flags without a value that say something about the workload
SWITCHES: dict[str, Callable[[Submit], None]] = {
    "--preemptible": _set("preemptible", True),
    "--non-preemptible": _set("preemptible", False),
    "--no-master": _set("no_master", True),
    "--interactive": lambda submit: None,
    "--jupyter": lambda submit: None,
}
COMMAND_FLAGS = ("--command", "-c")

FLAG_HANDLERS: dict[str, Callable[[Submit, Value], None]] = {
    "-i": _image, "--image": _image,
    "-g": _gpus, "--gpu": _gpus, "--gpus": _gpus, "--gpu-devices-request": _gpus,
    "--gpu-portion-request": _portion,
    "--master-gpu-devices-request": _master_gpus, "--master-gpu": _master_gpus,
    "-e": _env, "--environment": _env, "--environment-variable": _env, "--env": _env,
    "--worker-environment": _env, "--master-environment": _env,
    "--env-secret": _env_reference("runai-secret"),
    "--env-my-credentials": _env_reference("userCredential"),
    "--env-pod-field-ref": _env_reference("fieldRef"),
    "--pvc": _legacy_pvc,
    "--pvc-exists": _existing_pvc, "--existing-pvc": _existing_pvc,
    "--pvc-new": _existing_pvc, "--new-pvc": _existing_pvc,
    "-v": _volume, "--volume": _volume,
    "--host-path": _keyed("hostPath", False, ("mount", "mountpath", "mount-path"), ("path",)),
    "--nfs": _keyed("nfs", True, ("mountpath", "mount", "mount-path"), ("server",)),
    "--s3": _keyed("s3", True, ("path", "mount", "mountpath"), ("bucket", "name")),
    "--git-sync": _keyed("git", False, ("path", "target", "mount"), ("repository", "source", "name")),
    "--datasource": _keyed("datasource", True, ("path", "mount", "mountpath"), ("name",)),
    "--empty-dir-volume": _keyed("emptyDir", False, ("path", "mount", "mountpath"), ("name",)),
    "--secret-volume": _keyed("secret", False, ("path", "mount", "mountpath"), ("name",)),
    "--configmap-map-volume": _keyed("configMap", False, ("path", "mount", "mountpath"), ("name",)),
    "--configmap-volume": _keyed("configMap", False, ("path", "mount", "mountpath"), ("name",)),
    "--working-dir": _working_dir,
    "--preemptibility": _preemptibility,
    "--priority": _priority, "--priority-class": _priority, "--priority-class-name": _priority,
    "--backoff-limit": _number("retries"), "--backoffLimit": _number("retries"), "--backofflimit": _number("retries"),
    "--termination-grace-period": _grace,
    "--ttl-after-finish": _duration("ttl"), "--auto-deletion-time-after-completion": _duration("ttl"),
    "--workers": _workers, "--num-workers": _workers,
    "--parallelism": _number("parallelism"),
    "--label": _pairs("labels"), "--labels": _pairs("labels"),
    "--annotation": _pairs("annotations"), "--annotations": _pairs("annotations"),
    "--name": _name, "--job-name-prefix": _name, "--name-prefix": _name,
    "--args": _legacy_words("legacy_args"),
    "--template": _unresolved("template"), "--compute": _unresolved("compute asset"),
}
VALUE_IGNORED = ("-p", "--project", "-f", "--framework")


