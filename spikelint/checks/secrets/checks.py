"""SPK201–SPK207: secrets in any scanned file, workload env literals, command-line credentials,
notebook outputs, image tarballs (and what a Dockerfile writes into its image) and credential files.

One value, one finding: each document is scanned once by the specific rules (SPK202–SPK206)
and once by the general detector (SPK201); a general finding for a value a specific rule
already reported on the same line is dropped.  Every message holds the redacted form only,
and every problem's key is a hash of the secret, so neither output nor baseline holds it.

This module holds the checks; what they collect per kind of file is in the modules beside it
in ``spikelint.checks.secrets`` (trees, text-like files, notebooks, command lines, env values,
Dockerfile images, the findings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Callable
from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.secrets.detectors import PREFILTER
from spikelint.secrets.detectors import DETECT_SECRETS_PREFILTER
from spikelint.secrets.text import has_secret_hint
from spikelint.checks.secrets.encoded import with_encoded
from spikelint.checks.secrets.env import workload_env_findings
from spikelint.checks.secrets.files import dockerfile_copies
from spikelint.checks.secrets.files import dockerfile_findings
from spikelint.checks.secrets.files import python_findings
from spikelint.checks.secrets.files import shell_findings
from spikelint.checks.secrets.files import text_findings
from spikelint.checks.secrets.found import Found
from spikelint.checks.secrets.found import one_value_one_finding
from spikelint.checks.secrets.found import to_problem
from spikelint.checks.secrets.notebooks import notebook_findings
from spikelint.checks.secrets.trees import tree_findings

if TYPE_CHECKING:
    from spikelint.documents.image import ImageContents


DOCUMENT_RULES = ("SPK201", "SPK202", "SPK203", "SPK204", "SPK205", "SPK206")


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
# what a file without a secret-ish word can still hold: a Dockerfile's ``COPY .netrc`` names none
LEAN_COLLECTORS: dict[str, Callable[[Document], Iterator[Found]]] = {
    FileKind.DOCKERFILE: dockerfile_copies,
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
    return [(found.line, found.value) for workload in ctx.workloads for found in workload_env_findings(workload, document)]


@check(*DOCUMENT_RULES, scope="document")
def secrets_in_document(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Every secret rule that reads a document directly (SPK202 and SPK205 here only for Dockerfiles)."""
    collector = COLLECTORS.get(document.kind)
    if collector is None or not document.text:
        return
    if not _worth_scanning(document):
        collector = LEAN_COLLECTORS.get(document.kind)
    reporting = _selected_rules(ctx)
    found = [item for item in collector(document) if item.rule in reporting] if collector is not None else []
    if "SPK201" in reporting:  # a token base64-, hex- or percent-encoded holds no secret-ish word to prefilter on
        found = with_encoded(document.text, found)
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
                  f"{with_outputs[0].index}: outputs can expose prompts, data samples, personal data or secrets — "
                  f"clear them (jupyter nbconvert --clear-output --inplace) or install nbstripout",
                  key=f"outputs:{document.path}")


@check(*DOCUMENT_RULES, scope="document", kinds=(FileKind.IMAGE,))
def secrets_in_archive(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Each text member of a committed archive checked like a file of its own, named ``bundle.tar.gz!src/.env``."""
    from dataclasses import replace

    from spikelint.documents import parse_text
    from spikelint.documents.archive import ArchiveContents
    from spikelint.files import detect_kind
    from spikelint.model import SourceFile

    archive = document.parsed
    if not isinstance(archive, ArchiveContents):
        return
    for member in archive.members:
        name = f"{document.path}!{member.name}"
        inner = parse_text(SourceFile(name, document.source.abspath, detect_kind(member.name, member.text[:128])),
                           member.text)
        for problem in secrets_in_document(inner, ctx):
            yield replace(problem, path=name)


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

