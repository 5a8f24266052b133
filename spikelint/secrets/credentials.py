"""Credential files and objects (SPK206, and SPK205 for files inside image layers).

Two entry points: :func:`credential_file_secrets` recognises a file by its name and reads
its text (``.netrc``, ``.git-credentials``, ``.aws/credentials``, docker ``config.json``,
private keys, kubeconfig …); :func:`credential_object_secrets` recognises parsed YAML/JSON
objects (``kind: Secret``, kubeconfig, GCP service-account keys, docker ``auths``,
kustomize ``secretGenerator`` literals).  Both yield secrets with offsets into the text, or
with the node they sit in, and never flag a file that holds only placeholders.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import PurePosixPath
from typing import Callable
from typing import Iterator
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Node
from spikelint.secrets.context import is_documented_public_value
from spikelint.secrets.context import classify_key
from spikelint.secrets.context import key_words
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_reference
from spikelint.secrets.detectors import is_placeholder_value
from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import token_secrets
from spikelint.secrets.detectors import url_credentials


class NodeSecret(NamedTuple):
    """A credential held by a tree node (its scalar, or a key of it when the value is not a string)."""

    node: Node
    secret: Secret  # offsets within the node's text when it is a string scalar
    what: str  # e.g. "data of Secret 'wandb-credentials'"


# --------------------------------------------------------------------------- files by name

PRIVATE_KEY_NAMES = lazy_regex(r"^(?:id_(?:rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)|identity|.+\.(?:pem|key|p8|ppk|"
                               r"openssh|rsa|priv))$")
VENDORED = lazy_regex(r"(?:^|/)(?:site-packages|dist-packages|node_modules|vendor|third_party|testdata|test|tests|"
                      r"fixtures|usr/share|usr/lib/python[\d.]*|etc/ssl|etc/pki)(?:/|$)")
NETRC_TOKEN = lazy_regex(r"\S+")
INI_ENTRY = lazy_regex(r"^[ \t]*(?P<key>[A-Za-z_][\w.-]*)[ \t]*[=:][ \t]*(?P<value>\S[^\n#;]*?)[ \t]*$", re.MULTILINE)
AWS_CREDENTIAL_KEYS = frozenset(("aws_secret_access_key", "aws_session_token", "aws_access_key_id",
                                 "aws_security_token"))
PYPIRC_KEYS = frozenset(("password",))
NGC_KEYS = frozenset(("apikey",))
KUBECONFIG_LINE = lazy_regex(r"^[ \t-]*(?P<key>token|client-key-data|password|client-secret|id-token|refresh-token|"
                             r"access-token)[ \t]*:[ \t]*(?P<value>[^\s#]+)", re.MULTILINE)
AUTH_FIELD = lazy_regex(r'"(?P<key>auth|password|identitytoken|registrytoken)"\s*:\s*"(?P<value>[^"]*)"')
PGPASS_LINE = lazy_regex(r"^[^#\n:]*:[^\n:]*:[^\n:]*:[^\n:]*:(?P<value>[^\n]+)$", re.MULTILINE)
NPMRC_TOKEN = lazy_regex(r"(?:_authToken|_auth|_password)\s*=\s*(?P<value>[^\s]+)")


def _offset_secret(value: str, type_: str, start: int) -> Secret:
    return Secret(value, type_, start, start + len(value))


def _real(value: str) -> bool:
    text = value.strip().strip("'\"")
    return (bool(text) and not is_placeholder_value(text) and not is_reference(text)
            and not is_documented_public_value(text))


def _value_secrets(pattern: re.Pattern[str], text: str, type_: str) -> Iterator[Secret]:
    """The real ``value`` groups of ``pattern`` in ``text``."""
    for match in pattern.finditer(text):
        if _real(match.group("value")):
            yield _offset_secret(match.group("value"), type_, match.start("value"))


def _ini_secrets(text: str, keys: frozenset[str], type_: str) -> Iterator[Secret]:
    """Real values of the INI-style entries whose key (in any case) is one of ``keys``."""
    for match in INI_ENTRY.finditer(text):
        if match.group("key").lower() in keys and _real(match.group("value")):
            yield _offset_secret(match.group("value"), type_, match.start("value"))


def netrc_secrets(text: str) -> Iterator[Secret]:
    """``machine h login u password p`` (tokens may span lines): each real password."""
    tokens = list(NETRC_TOKEN.finditer(text))
    for current, following in zip(tokens, tokens[1:]):
        if current.group() in ("password", "passwd", "account") and _real(following.group()):
            yield _offset_secret(following.group(), "password in .netrc", following.start())


def git_credentials_secrets(text: str) -> Iterator[Secret]:
    for secret in url_credentials(text):
        yield secret._replace(type="credentials in .git-credentials")


def aws_credentials_secrets(text: str) -> Iterator[Secret]:
    yield from _ini_secrets(text, AWS_CREDENTIAL_KEYS, "AWS credentials file entry")


def private_key_secrets(text: str) -> Iterator[Secret]:
    for secret in token_secrets(text):
        if secret.type == "private key":
            yield secret


def docker_config_secrets(text: str) -> Iterator[Secret]:
    """``auths.*.auth`` (base64 ``user:password``), ``password``, ``identitytoken`` in a docker config."""
    if '"auths"' not in text and '"auth"' not in text:
        return
    for match in AUTH_FIELD.finditer(text):
        value = match.group("value")
        if not _real(value):
            continue
        type_ = registry_credential_type(value) if match.group("key") == "auth" else "Docker registry credentials"
        if type_:
            yield _offset_secret(value, type_, match.start("value"))


def kubeconfig_secrets(text: str) -> Iterator[Secret]:
    for match in KUBECONFIG_LINE.finditer(text):
        if _real(match.group("value")):
            yield _offset_secret(match.group("value"), f"kubeconfig {match.group('key')}", match.start("value"))


def pgpass_secrets(text: str) -> Iterator[Secret]:
    yield from _value_secrets(PGPASS_LINE, text, "password in .pgpass")


def npmrc_secrets(text: str) -> Iterator[Secret]:
    yield from _value_secrets(NPMRC_TOKEN, text, "npm registry token")


def pypirc_secrets(text: str) -> Iterator[Secret]:
    yield from _ini_secrets(text, PYPIRC_KEYS, "password in .pypirc")


def kaggle_secrets(text: str) -> Iterator[Secret]:
    """``kaggle.json``: ``{"username": "…", "key": "<32 hex>"}``."""
    match = re.search(r'"key"\s*:\s*"(?P<value>[^"]+)"', text)
    if match and _real(match.group("value")):
        yield _offset_secret(match.group("value"), "Kaggle API key", match.start("value"))


def ngc_config_secrets(text: str) -> Iterator[Secret]:
    """``~/.ngc/config``: ``apikey = …``."""
    yield from _ini_secrets(text, NGC_KEYS, "NGC API key")


def token_file_secrets(text: str) -> Iterator[Secret]:
    """A file that is just a token (``~/.huggingface/token``, ``.vault-token``)."""
    value = text.strip()
    if value and "\n" not in value and _real(value) and len(value) >= 16:
        found = token_secrets(value)
        yield found[0] if found else _offset_secret(value, "token file", text.find(value))


def gcp_key_file_secrets(text: str) -> Iterator[Secret]:
    if '"service_account"' not in text or '"private_key"' not in text:
        return
    match = re.search(r'"private_key"\s*:\s*"(?P<value>[^"]+)"', text)
    if match and "PRIVATE KEY" in match.group("value"):
        yield _offset_secret(match.group("value"), "GCP service-account key", match.start("value"))


Recogniser = Callable[[str], Iterator[Secret]]


def credential_file_kind(path: str) -> str | None:
    """Which credential file a path names (``None`` for ordinary files)."""
    pure = PurePosixPath(path.replace("\\", "/"))
    name = pure.name.lower()
    parent = pure.parent.name.lower()
    if name in (".netrc", "_netrc"):
        return "netrc"
    if name == ".git-credentials":
        return "git-credentials"
    if name in ("credentials", "credentials.ini") and parent == ".aws":
        return "aws"
    if (name == "config.json" and parent == ".docker") or name.endswith(".dockerconfigjson") or name == ".dockercfg":
        return "docker"
    if (name == "config" and parent == ".kube") or name in ("kubeconfig", "kubeconfig.yaml", "kubeconfig.yml"):
        return "kubeconfig"
    if name == "kaggle.json":
        return "kaggle"
    if name == "config" and parent == ".ngc":
        return "ngc"
    if name == ".pgpass":
        return "pgpass"
    if name == ".npmrc":
        return "npmrc"
    if name == ".pypirc":
        return "pypirc"
    if name in (".vault-token",) or (name in ("token", "stored_tokens") and parent == "huggingface"):
        return "token-file"
    if name == "application_default_credentials.json" or (name.endswith(".json") and re.search(
            r"service[-_]?account|sa[-_]key|gcp[-_]?key|credentials", name)):
        return "gcp"
    if PRIVATE_KEY_NAMES.match(name):
        return "private-key"
    return None


FILE_RECOGNISERS: dict[str, Recogniser] = {
    "netrc": netrc_secrets,
    "git-credentials": git_credentials_secrets,
    "aws": aws_credentials_secrets,
    "docker": docker_config_secrets,
    "kubeconfig": kubeconfig_secrets,
    "pgpass": pgpass_secrets,
    "kaggle": kaggle_secrets,
    "ngc": ngc_config_secrets,
    "npmrc": npmrc_secrets,
    "pypirc": pypirc_secrets,
    "token-file": token_file_secrets,
    "gcp": gcp_key_file_secrets,
    "private-key": private_key_secrets,
}


def credential_file_secrets(path: str, text: str) -> list[Secret]:
    """The credentials a credential file holds (empty for other files and for placeholder-only ones)."""
    kind = credential_file_kind(path)
    if kind is None:
        if text.lstrip().startswith("-----BEGIN") and "PRIVATE KEY" in text[:200]:
            kind = "private-key"
        else:
            return []
    return list(FILE_RECOGNISERS[kind](text))


def is_vendored(path: str) -> bool:
    """Inside installed packages or test data (their ``*.pem`` keys are fixtures, not credentials)."""
    return bool(VENDORED.search(path.lstrip("./")))


# --------------------------------------------------------------------------- files by name alone

CREDENTIAL_FOLDERS = frozenset((".ssh", ".aws", ".kube", ".gnupg"))
TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".tmpl", ".tpl", ".dist")
# ``apt.key``, ``repo-signing.key``, ``pubkey.pem``: public keys by their names
PUBLIC_KEY_NAME = lazy_regex(r"pub|gpg|pgp|(?:^|[-_.])(?:apt|repo|sign|keyring|archive|release|trust)")
PRIVATE_PEM_NAME = lazy_regex(r"key|priv|id_")  # ``ca.pem``, ``fullchain.pem``: certificates


def credential_kind_by_name(path: str) -> str | None:
    """Which credential a path names when its content cannot be read (a Dockerfile's ``COPY`` source).

    Stricter than :func:`credential_file_kind`, which reads the content next: a ``*.pem`` counts
    only when its name says key (``privkey.pem``, ``server-key.pem``; ``ca.pem`` is a certificate),
    a ``*.key`` not when it names a repository's signing key (``apt.key``); a folder counts when it
    is one of the credential folders (``.ssh``, ``.aws``, ``.kube``, ``.gnupg``); templates
    (``.netrc.example``) and test data never count.
    """
    pure = PurePosixPath(path.replace("\\", "/").rstrip("/"))
    name = pure.name.lower()
    if not name or name.endswith(TEMPLATE_SUFFIXES):
        return None
    if name in CREDENTIAL_FOLDERS:
        return "folder"
    kind = credential_file_kind(str(pure))
    if kind != "private-key":
        return kind
    stem, _, suffix = name.rpartition(".")
    if is_vendored(str(pure)) or (suffix in ("pem", "key") and PUBLIC_KEY_NAME.search(stem)):
        return None
    if suffix == "pem" and not PRIVATE_PEM_NAME.search(stem):
        return None
    return kind


# --------------------------------------------------------------------------- registry auth


def decode_auth(value: str) -> tuple[str, str] | None:
    """``base64("user:password")`` -> ``(user, password)``; ``None`` when it is not that."""
    try:
        decoded = base64.b64decode(value.strip() + "=" * (-len(value.strip()) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    user, colon, password = decoded.partition(":")
    return (user, password) if colon else None


def registry_credential_type(auth: str) -> str | None:
    """The type of a docker ``auth`` value, or ``None`` when it decodes to a placeholder."""
    pair = decode_auth(auth)
    if pair is None:
        return "Docker registry credentials"
    user, password = pair
    if not _real(password):
        return None
    return "Harbor robot credentials" if user.startswith("robot$") or user.startswith("robot_") else \
        "Docker registry credentials"


# --------------------------------------------------------------------------- objects in YAML/JSON trees


def _scalar_text(node: Node | None) -> str | None:
    if node is None or node.kind != "scalar" or node.value is None:
        return None
    return str(node.value)


def _whole(node: Node, type_: str, what: str, value: str | None = None) -> NodeSecret:
    text = value if value is not None else (_scalar_text(node) or "")
    return NodeSecret(node, Secret(text, type_, 0, len(text)), what)


def kubernetes_secret_secrets(root: Node) -> Iterator[NodeSecret]:
    """``kind: Secret`` with ``data``/``stringData`` values (base64 is an encoding, not encryption)."""
    name = _scalar_text(root.get("metadata", "name")) or "?"
    for section, encoded in (("data", True), ("stringData", False)):
        holder = root.get(section)
        if holder is None or holder.kind != "map":
            continue
        for key, node in holder.value.items():
            text = _scalar_text(node)
            if text is None or _names_no_credential(str(key)):
                continue
            plain = _decoded(text) if encoded else text
            if plain is None or not _real(plain) or _only_certificates(plain) or _json_of_placeholders(plain):
                continue
            yield _whole(node, "Kubernetes Secret value", f"{section}.{key} of Secret '{name}'")


# the last word of a Secret key that holds what a client connects with, not what it proves itself with
CONNECTION_WORDS = frozenset(("user", "username", "login", "db", "database", "dbname", "schema", "host", "hostname",
                              "port", "server", "endpoint", "url", "uri", "region", "bucket", "namespace", "email"))


def _names_no_credential(key: str) -> bool:
    """``POSTGRES_USER``, ``POSTGRES_DB``, ``host``: a Secret often carries the connection's other settings
    beside its password; those are not credentials (the password beside them is reported)."""
    words = key_words(key)
    return bool(words) and words[-1] in CONNECTION_WORDS and not classify_key(key).secret


def _json_of_placeholders(text: str) -> bool:
    """A JSON object (a storage config) whose secret-named values are all placeholders (``minio123``)."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return False
    try:
        data = json.loads(stripped)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    secrets = [value for key, value in data.items() if classify_key(str(key)).secret]
    return bool(secrets) and all(isinstance(value, str) and not _real(value) for value in secrets)


def _only_certificates(text: str) -> bool:
    """``tls.crt``/``ca.crt``: PEM certificates are public; only the key beside them is a secret."""
    stripped = text.strip()
    return stripped.startswith("-----BEGIN CERTIFICATE-----") and "PRIVATE KEY" not in stripped


def _decoded(text: str) -> str | None:
    try:  # a long value folded over lines (``ca.crt: LS0t…`` in a block scalar) is base64 all the same
        return base64.b64decode("".join(text.split()), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return text  # not base64: the literal itself is what is exposed


def kubeconfig_object_secrets(root: Node) -> Iterator[NodeSecret]:
    users = root.get("users")
    for item in users.value if users is not None and users.kind == "seq" else []:
        user = item.get("user") if item.kind == "map" else None
        if user is None or user.kind != "map":
            continue
        name = _scalar_text(item.get("name")) or "?"
        for key in ("token", "client-key-data", "client-key", "password"):
            node = user.get(key)
            text = _scalar_text(node)
            if node is not None and text and _real(text) and not (key == "client-key" and text.startswith("/")):
                yield _whole(node, f"kubeconfig {key}", f"user '{name}' of a kubeconfig")
        config = user.get("auth-provider", "config")
        for key, node in (config.value.items() if config is not None and config.kind == "map" else []):
            text = _scalar_text(node)
            if key in ("access-token", "refresh-token", "client-secret", "id-token") and text and _real(text):
                yield _whole(node, f"kubeconfig {key}", f"user '{name}' of a kubeconfig")


def gcp_service_account_secrets(root: Node) -> Iterator[NodeSecret]:
    key = root.get("private_key")
    text = _scalar_text(key)
    if key is not None and text and "PRIVATE KEY" in text and not is_placeholder(text):
        email = _scalar_text(root.get("client_email")) or "?"
        yield _whole(key, "GCP service-account key", f"service account '{email}'")


def docker_auths_secrets(node: Node) -> Iterator[NodeSecret]:
    """``{"auths": {"registry": {"auth": base64(user:pass)}}}`` anywhere in a tree."""
    auths = node.get("auths")
    if auths is None or auths.kind != "map":
        return
    for registry, entry in auths.value.items():
        if entry.kind != "map":
            continue
        for field in ("auth", "password", "identitytoken", "registrytoken"):
            value_node = entry.get(field)
            text = _scalar_text(value_node)
            if value_node is None or not text or not _real(text):
                continue
            type_ = registry_credential_type(text) if field == "auth" else "Docker registry credentials"
            if type_ is None:
                continue
            user = _scalar_text(entry.get("username")) or ""
            if user.startswith("robot$"):
                type_ = "Harbor robot credentials"
            yield _whole(value_node, type_, f"auths of registry '{registry}'")


def kustomize_literal_secrets(root: Node) -> Iterator[NodeSecret]:
    generators = root.get("secretGenerator")
    for generator in generators.value if generators is not None and generators.kind == "seq" else []:
        literals = generator.get("literals") if generator.kind == "map" else None
        name = _scalar_text(generator.get("name")) if generator.kind == "map" else None
        for item in literals.value if literals is not None and literals.kind == "seq" else []:
            text = _scalar_text(item)
            if not text or "=" not in text:
                continue
            key, _, value = text.partition("=")
            if _real(value):
                start = len(key) + 1
                yield NodeSecret(item, Secret(value, "secretGenerator literal", start, start + len(value)),
                                 f"literal '{key}' of secretGenerator '{name or '?'}'")


def _is_kind(root: Node, kind: str) -> bool:
    return _scalar_text(root.get("kind")) == kind


def credential_object_secrets(root: Node) -> Iterator[NodeSecret]:
    """Credential objects in one parsed YAML/JSON document."""
    if root.kind != "map":
        return
    if _is_kind(root, "Secret") and str(_scalar_text(root.get("apiVersion")) or "v1") == "v1":
        yield from kubernetes_secret_secrets(root)
    elif _is_kind(root, "Config") and root.get("users") is not None:
        yield from kubeconfig_object_secrets(root)
    elif _scalar_text(root.get("type")) == "service_account":
        yield from gcp_service_account_secrets(root)
    elif root.get("secretGenerator") is not None:
        yield from kustomize_literal_secrets(root)
    yield from docker_auths_secrets(root)


def json_credential_secrets(name: str, text: str) -> list[Secret]:
    """Credential objects in a JSON text that is not a repository document (an image layer file)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    found: list[Secret] = []
    if data.get("type") == "service_account" and isinstance(data.get("private_key"), str) and \
            "PRIVATE KEY" in data["private_key"]:
        found.append(Secret(data["private_key"], "GCP service-account key", 0, 0))
    auths = data.get("auths")
    if isinstance(auths, dict):
        for entry in auths.values():
            auth = entry.get("auth") if isinstance(entry, dict) else None
            if isinstance(auth, str) and _real(auth):
                type_ = registry_credential_type(auth)
                if type_:
                    found.append(Secret(auth, type_, 0, 0))
    return found
