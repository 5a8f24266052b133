"""SPK202's test for a secret-named variable holding a literal, and its findings in workloads.

Workload env lists (Kubernetes, Run:ai CRD/REST, ``runai -e``) and Dockerfile ``ENV``/``ARG``
are judged by the same ``env_literal``; a Harbor robot account beside a secret names its type.
"""

from __future__ import annotations

import re
from typing import Iterator

from spikelint.model import Document
from spikelint.model import EnvVar
from spikelint.model import Workload
from spikelint.secrets.context import is_digit_password
from spikelint.secrets.context import is_not_a_credential_literal
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_reference
from spikelint.secrets.context import is_secret_env_name
from spikelint.secrets.context import looks_like_secret_name
from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import token_secrets
from spikelint.secrets.detectors import type_for_key
from spikelint.checks.secrets.found import Found
from spikelint.checks.secrets.found import found_at


HARBOR_ROBOT = "Harbor robot credentials"
KEYED_TYPES = frozenset(("password", "secret", "token", "API key"))


def is_robot_account(value: object) -> bool:
    """Harbor robot accounts are named ``robot$<project>+<name>`` (``robot_`` when so configured)."""
    return isinstance(value, str) and value.startswith(("robot$", "robot_"))


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


def env_type(name: str, value: str) -> str:
    tokens = token_secrets(value)
    return tokens[0].type if tokens else type_for_key(name, value)


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
    secret = Secret(value, env_type(name, value), 0, len(value))
    return found_at("SPK202", lines, secret, where.line, where.end_line or where.line, (where.line, where.column),
                  f" {name}")


