"""SPK101–SPK104: images that can change under a run, or come from where they should not."""

from __future__ import annotations

import posixpath
from typing import Callable
from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.discovery.kustomize import listed_paths
from spikelint.config import Config
from spikelint.facts.images import ImageRef
from spikelint.facts.images import ImageSyntaxError
from spikelint.facts.images import has_literal_digest
from spikelint.facts.images import is_placeholder
from spikelint.facts.images import is_unresolved
from spikelint.facts.images import mutable_tag_word
from spikelint.facts.images import parse_image
from spikelint.facts.images import placeholder_parts
from spikelint.facts.images import registry_allowed
from spikelint.facts.images import unresolved_names
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import Problem
from spikelint.model import SourceFile
from spikelint.model import Workload
from spikelint.model import walk
from spikelint.util.pathnames import base_name
from spikelint.discovery.project import Project
from spikelint.documents.shell import Script
from spikelint.documents.shell import expand
from spikelint.util.lazyre import lazy_regex

IMAGE_RULES = ("SPK101", "SPK102", "SPK103", "SPK104")
# ko builds and pushes these at deploy time and writes the digest-pinned reference in their place
BUILD_TIME_REFERENCES = ("ko://",)
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SKAFFOLD_FILES = ("skaffold.yaml", "skaffold.yml")
SET_IMAGE = lazy_regex(r"(?i)kustomize\S*\s+edit\s+set\s+image\s")
KUSTOMIZE_INCLUDES = ("resources", "bases", "components", "patches", "patchesStrategicMerge", "patchesJson6902")
FIX = "pin it by digest (image:tag@sha256:…) or an immutable version tag"


def image_problems(where: Located, text: str, config: Config, origin: str = "", *,
                   reported: set[tuple[str, ...]] | None = None,
                   overridden: Callable[[ImageRef], bool] | None = None) -> Iterator[Problem]:
    """Every image rule for one reference written at ``where`` (``origin`` explains ARG resolution).

    ``reported`` holds the variables already reported as SPK104 in this file (one finding per
    file and variable); ``overridden`` tells whether a kustomize overlay in the tree sets the
    image's tag, in which case the overlay's ``newTag`` is the one judged.
    """
    shown = text.strip()
    if not shown or shown.startswith(BUILD_TIME_REFERENCES):
        return
    if is_unresolved(shown) or is_placeholder(shown):
        if has_literal_digest(shown):
            return  # the digest is written out: whatever the variable names, the content is fixed
        names = unresolved_names(shown) if is_unresolved(shown) else (placeholder_parts(shown) or (shown,))
        if reported is not None:
            if names in reported:
                return
            reported.add(names)
        what = "a placeholder to replace before use" if is_placeholder(shown) else (
            "a template or variable that cannot be resolved statically")
        yield Problem.at("SPK104", where, f"image {shown!r} is {what}, so its immutability cannot be checked — "
                         f"write the reference (with a digest) or give the variable a pinned default", key=shown)
        return
    try:
        image = parse_image(shown)
    except ImageSyntaxError:
        return
    yield from _registry(where, image, config)
    if image.digest:
        return
    if overridden is not None and overridden(image):
        return  # a kustomize overlay sets this image's tag: its newTag is reported there
    if image.tag is None:
        yield Problem.at("SPK101", where, f"image {shown!r}{origin} has no tag and no digest, so it means ':latest' "
                         f"and changes whenever someone pushes — {FIX}", key=shown)
        return
    word = mutable_tag_word(image.tag, config.mutable_tag_words(),
                            config.immutable_tag_regex())
    if word is not None:
        floats = f"the mutable tag {image.tag!r}" if word == image.tag.lower() else (
            f"tag {image.tag!r}, a variant of the mutable {word!r}")
        yield Problem.at("SPK101", where, f"image {shown!r}{origin} uses {floats}, which is moved to new builds: a "
                         f"retry or a resumed run can start from a different image — {FIX}", key=shown)
    elif not config.immutable_tag_regex().match(image.tag):
        yield Problem.at("SPK102", where, f"image {shown!r}{origin} has tag {image.tag!r}, which is not a full "
                         f"version, commit or date stamp and can float to new builds — add the digest "
                         f"(@sha256:…) or use an immutable tag", key=shown)


def _registry(where: Located, image: ImageRef, config: Config) -> Iterator[Problem]:
    if config.allowed_registries and not registry_allowed(image, config.allowed_registries):
        allowed = ", ".join(config.allowed_registries)
        yield Problem.at("SPK103", where, f"image {image.text!r} comes from registry {image.registry!r}, which is "
                         f"not in allowed_registries ({allowed}) — mirror it into an allowed registry",
                         key=f"registry:{image.registry}/{image.repository}", legacy_key=image.text)


@check(*IMAGE_RULES, scope="workload")
def workload_images(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Images of every container of a workload: main, init and ephemeral.

    In YAML and JSON the document check below reads every ``image:`` too and reports SPK104
    once per file and variable, so here it is left to that check.
    """
    tree_document = document.kind in (FileKind.YAML, FileKind.JSON)
    overridden = ReplacedAtDeploy(ctx.project, document.path) if tree_document else None
    for container in workload.containers:
        if container.image is not None and isinstance(container.image.value, str):
            written = _written_at(document, container.image)
            origin = "" if not written or container.image.value in written else \
                f" (from {written!r})" if "$" in written else f" (written {written!r})"
            for problem in image_problems(container.image, container.image.value, ctx.config, origin,
                                          overridden=overridden):
                if not (tree_document and problem.rule == "SPK104"):
                    yield problem


class KustomizeOverrides:
    """Whether a kustomization that includes this file sets an image's tag (or digest) by name.

    A base manifest's ``image: controller:latest`` is rewritten by the ``images:`` entry of a
    kustomization that lists it (directly, or through the bases, components and patches it
    includes); that ``newTag`` is what runs, so it alone is judged.  Read on first use: most
    images never need it.
    """

    def __init__(self, project: Project, path: str) -> None:
        self.project = project
        self.path = posixpath.normpath(path)
        self._names: set[tuple[str, str]] | None = None

    def __call__(self, image: ImageRef) -> bool:
        if self._names is None:
            self._names = self._read()
        return (image.registry, image.repository) in self._names

    def _read(self) -> set[tuple[str, str]]:
        kustomizations = {posixpath.normpath(source.path): source for name in KUSTOMIZATION_FILES
                          for source in self.project.named(name)}
        names: set[tuple[str, str]] = set()
        for path, source in kustomizations.items():
            trees = [tree for tree in self.project.document(source).trees if tree.kind == "map"]
            overrides = {name for tree in trees for name in _tag_overrides(tree)}
            if overrides and self.path in _included(path, kustomizations, self.project, set()):
                names |= overrides
        return names


class ReplacedAtDeploy(KustomizeOverrides):
    """Whether the deploy tooling of this tree writes a different reference in place of an image.

    Besides a kustomization's ``images:`` entry: a ``kustomize edit set image NAME=…`` command in a
    script of the tree (it writes that entry at release time), and a skaffold artifact of the same
    name (skaffold builds ``build.artifacts[].image`` itself and replaces the name in the manifests it
    deploys with the tag it pushed).  Read on first use, and once per project.
    """

    def __call__(self, image: ImageRef) -> bool:
        return super().__call__(image) or (image.registry, image.repository) in _deploy_names(self.project)


# (how many sources the project had, the names, the files they were read from), kept on the project
DEPLOY_NAMES_KEY = "spikelint.checks.images.deploy_names"


def _deploy_names(project: Project) -> frozenset[tuple[str, str]]:
    """The image names skaffold or ``kustomize edit set image`` replace anywhere in the tree.

    Every manifest of a tree asks the same question, so the answer is kept while the project lives;
    each asker still records the files it depends on (the result cache re-checks it when they change).
    """
    skaffolds = [source for name in SKAFFOLD_FILES for source in project.named(name)]
    known = project.derived.get(DEPLOY_NAMES_KEY)
    if not isinstance(known, tuple) or known[0] != len(project.sources):
        scripts = [source for source in project.sources if source.kind == FileKind.SHELL]
        names: set[tuple[str, str]] = set()
        for source in skaffolds:
            names.update(name for tree in project.document(source).trees for name in skaffold_artifacts(tree))
        for source in scripts:
            if not SET_IMAGE.search(project.text(source)):
                continue  # nearly every script: not parsed for this question
            loaded = source.path in project.parsed
            names.update(_set_image_names(project.document(source)))
            if not loaded:
                project.release(source.path)  # read for this question only: memory stays flat
        known = (len(project.sources), frozenset(names), tuple(source.path for source in [*skaffolds, *scripts]))
        project.derived[DEPLOY_NAMES_KEY] = known
    project.touched.update(known[2])
    return known[1]


def skaffold_artifacts(tree: Node) -> Iterator[tuple[str, str]]:
    """``build.artifacts[].image`` of a skaffold ``Config`` (its profiles' too): names skaffold builds and tags."""
    if tree.kind != "map" or not str(tree.scalar("apiVersion") or "").startswith("skaffold/"):
        return
    profiles = tree.get("profiles")
    for config in [tree, *(profiles.value if profiles is not None and profiles.kind == "seq" else [])]:
        artifacts = config.get("build", "artifacts") if config.kind == "map" else None
        for artifact in artifacts.value if artifacts is not None and artifacts.kind == "seq" else []:
            name = artifact.scalar("image") if artifact.kind == "map" else None
            if isinstance(name, str):
                yield from _image_name(name)


def _set_image_names(document: Document) -> Iterator[tuple[str, str]]:
    """``kustomize edit set image NAME=new:tag`` (or ``NAME:tag``, ``NAME@digest``): the NAMEs it replaces."""
    script = document.parsed
    if not isinstance(script, Script):
        return
    for inner in script.scripts():
        for command in inner.commands():
            argv = command.argv()
            for index in range(1, len(argv) - 3):
                if argv[index:index + 3] == ["edit", "set", "image"] and "kustomize" in argv[index - 1].lower():
                    for argument in argv[index + 3:]:
                        name = argument.split("=", 1)[0] if "=" in argument else _untagged(argument)
                        resolved = expand(name, inner.variables()) if not argument.startswith("-") else None
                        if resolved and "$" not in resolved:
                            yield from _image_name(resolved)


def _untagged(reference: str) -> str:
    """``controller:v1`` -> ``controller``; ``host:5000/x@sha256:…`` -> ``host:5000/x``."""
    folder, _, last = reference.rpartition("/")
    last = last.split("@", 1)[0].split(":", 1)[0]
    return f"{folder}/{last}" if folder else last


def _image_name(text: str) -> Iterator[tuple[str, str]]:
    try:
        parsed = parse_image(text)
    except ImageSyntaxError:
        return
    yield parsed.registry, parsed.repository


def _tag_overrides(tree: Node) -> Iterator[tuple[str, str]]:
    images = tree.get("images")
    for entry in images.value if images is not None and images.kind == "seq" else []:
        name = entry.scalar("name") if entry.kind == "map" else None
        if isinstance(name, str) and (entry.scalar("newTag") or entry.scalar("digest")):
            try:
                parsed = parse_image(name)
            except ImageSyntaxError:
                continue
            yield parsed.registry, parsed.repository


def _included(path: str, kustomizations: dict[str, SourceFile], project: Project, visited: set[str]) -> set[str]:
    """The files a kustomization builds from: its resources, bases, components and patch files, followed."""
    if path in visited:
        return set()
    visited.add(path)
    found: set[str] = set()
    for tree in project.document(kustomizations[path]).trees:
        for resolved in listed_paths(tree, KUSTOMIZE_INCLUDES, path):
            found.add(resolved)
            for name in KUSTOMIZATION_FILES:
                nested = posixpath.join(resolved, name)
                if nested in kustomizations:
                    found |= _included(nested, kustomizations, project, visited)
    return found


# --------------------------------------------------------------------------- Dockerfiles


@check(*IMAGE_RULES, scope="document", kinds=(FileKind.DOCKERFILE,))
def dockerfile_images(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """``FROM``, ``COPY --from=<image>`` and ``RUN --mount=…,from=<image>``, ARG defaults resolved."""
    from spikelint.documents.dockerfile import Dockerfile
    from spikelint.documents.dockerfile import resolve_args

    dockerfile = document.parsed
    if not isinstance(dockerfile, Dockerfile):
        return
    stage_names = {stage.name.lower() for stage in dockerfile.stages if stage.name}
    reported: set[tuple[str, ...]] = set()
    for stage in dockerfile.stages:
        where = Located(stage.base, stage.base_line, stage.base_column, stage.base_line,
                        stage.base_column + len(stage.base))
        yield from _dockerfile_reference(where, stage.base, dockerfile.global_args, stage_names, resolve_args,
                                         ctx.config, stage.index, reported)
    for instruction in dockerfile.instructions:
        sources: list[str] = []
        if instruction.keyword in ("COPY", "ADD") and "from" in instruction.flags:
            sources.append(instruction.flags["from"])
        if instruction.keyword == "RUN" and "mount" in instruction.flags:
            for mount in instruction.flags["mount"].split("\n"):
                options = dict(part.split("=", 1) for part in mount.split(",") if "=" in part)
                if "from" in options:
                    sources.append(options["from"])
        for source in sources:
            column = _column_of(document, instruction.line, source, instruction.column)
            where = Located(source, instruction.line, column, instruction.line, column + len(source))
            yield from _dockerfile_reference(where, source, dockerfile.global_args, stage_names, resolve_args,
                                             ctx.config, len(dockerfile.stages), reported)


def _written_at(document: Document, where: Located) -> str:
    """The text of one line at ``where`` (a pyxis ``nvcr.io#nvidia/pytorch:24.05`` the model reads as
    ``nvcr.io/nvidia/pytorch:24.05``); '' when it spans lines or is not known."""
    lines = document.lines
    if not (0 < where.line <= len(lines)) or where.end_line not in (None, where.line) or not where.end_column:
        return ""
    return lines[where.line - 1][where.column - 1:where.end_column - 1].strip("'\"")


def _column_of(document: Document, line: int, text: str, default: int) -> int:
    lines = document.lines
    if 0 < line <= len(lines):
        found = lines[line - 1].find(text)
        if found >= 0:
            return found + 1
    return default


def _dockerfile_reference(where: Located, written: str, global_args: dict[str, str | None], stage_names: set[str],
                          resolve_args: Callable[[str, dict[str, str | None]], str | None], config: Config,
                          earlier_stages: int, reported: set[tuple[str, ...]]) -> Iterator[Problem]:
    """``earlier_stages``: how many stages precede the reference (``COPY --from=0`` names one of them)."""
    text = written.strip()
    if text.lower() == "scratch" or text.lower() in stage_names or (text.isdigit() and int(text) < earlier_stages):
        return
    origin = ""
    if "$" in text:
        resolved = resolve_args(text, global_args)
        if resolved is None:
            if has_literal_digest(text):
                return  # pinned by its written-out digest whatever the build argument is
            names = unresolved_names(text)
            if names in reported:
                return
            reported.add(names)
            yield Problem.at("SPK104", where, f"image {text!r} uses a build argument without a default, so the "
                             f"image is chosen at build time and its immutability cannot be checked — give the ARG a "
                             f"pinned default (with a digest)", key=text)
            return
        if resolved.lower() in stage_names or resolved.lower() == "scratch":
            return
        origin = f" (from {text!r} with the ARG defaults)"
        text = resolved
    yield from image_problems(where, text, config, origin, reported=reported)


# --------------------------------------------------------------------------- Helm values and kustomize


def _is_workload_document(tree: Node) -> bool:
    return tree.kind == "map" and isinstance(tree.scalar("apiVersion"), str) and isinstance(tree.scalar("kind"), str)


def _helm_image(node: Node, config: Config, reported: set[tuple[str, ...]]) -> Iterator[Problem]:
    """``image: {registry, repository, tag, digest}`` as Helm charts write it."""
    repository = node.get("repository")
    if repository is None or repository.kind != "scalar" or not isinstance(repository.value, str) or not repository.value:
        return
    registry = node.scalar("registry")
    tag_node = node.get("tag")
    digest = node.scalar("digest")
    if isinstance(digest, str) and digest:
        return
    name = f"{registry}/{repository.value}" if isinstance(registry, str) and registry else repository.value
    if tag_node is None or tag_node.kind != "scalar" or tag_node.value in (None, ""):
        return  # Helm fills an empty tag from the chart's appVersion: not visible here
    reference = f"{name}:{tag_node.value}"
    yield from image_problems(tag_node.located(), reference, config, reported=reported)


def _kustomize_images(tree: Node, config: Config, reported: set[tuple[str, ...]]) -> Iterator[Problem]:
    images = tree.get("images")
    if images is None or images.kind != "seq":
        return
    for entry in images.value:
        if entry.kind != "map" or entry.scalar("digest"):
            continue
        new_tag = entry.get("newTag")
        if new_tag is None or new_tag.kind != "scalar" or new_tag.value in (None, ""):
            continue
        name = entry.scalar("newName") or entry.scalar("name")
        if not isinstance(name, str):
            continue
        yield from image_problems(new_tag.located(), f"{name}:{new_tag.value}", config, reported=reported)


def _own_artifacts(tree: Node, overridden: ReplacedAtDeploy) -> Callable[[ImageRef], bool]:
    """A skaffold ``Config`` names the images it builds (``build.artifacts[].image``, and ``test[].image``
    refers to them): names, not references to pin.  Any other document: the tree's deploy tooling decides."""
    artifacts = set(skaffold_artifacts(tree))
    if not artifacts:
        return overridden
    return lambda image: (image.registry, image.repository) in artifacts or overridden(image)


def _declared_images(tree: Node, config: Config, reported: set[tuple[str, ...]],
                     overridden: Callable[[ImageRef], bool]) -> Iterator[Problem]:
    """Every ``image:`` string of a Kubernetes-style object or a Run:ai REST body.

    The workload adapters cover the kinds they know; this walk also covers custom resources
    that hold containers in their own shape (Argo, Tekton, Ray, KServe …).  The engine drops
    the duplicates, since both report the same value at the same position.
    """
    for _path, node in walk(tree):
        if node.kind != "map":
            continue
        child = node.value.get("image")
        if child is None:
            continue
        if child.kind == "map" and set(child.value) == {"value"}:
            child = child.value["value"]  # Run:ai CRD wrapper
        if child.kind == "scalar" and isinstance(child.value, str) and child.value.strip():
            split = _split_reference(node, child.value)
            if split is not None:
                if split[1]:
                    yield from image_problems(split[0].located(), split[1], config, reported=reported,
                                              overridden=overridden)
                continue
            yield from image_problems(child.located(), child.value, config, reported=reported, overridden=overridden)


def _split_reference(node: Node, image: str) -> tuple[Node, str] | None:
    """``{repository: nvcr.io/nvidia, image: driver, version: "595.91.07"}``, as NVIDIA's operator
    resources write an image: the tag sits beside the name. (The version's node, the whole reference),
    ``""`` when the version is left empty for the operator to fill; ``None`` for a whole reference."""
    version = node.get("version")
    if version is None or version.kind != "scalar" or ":" in image.rsplit("/", 1)[-1] or "@" in image:
        return None
    repository = node.scalar("repository")
    name = f"{repository.rstrip('/')}/{image}" if isinstance(repository, str) and repository else image
    return version, (f"{name}:{version.value}" if version.value not in (None, "") else "")


def _is_rest_body(tree: Node) -> bool:
    spec = tree.get("spec")
    return tree.kind == "map" and spec is not None and spec.kind == "map" and isinstance(tree.scalar("name"), str)


@check(*IMAGE_RULES, scope="document", kinds=(FileKind.YAML, FileKind.JSON))
def values_and_overlay_images(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Images written outside a known workload: custom resources, Helm values, kustomize overlays."""
    name = base_name(document.path).lower()
    is_values = name.startswith("values") and document.kind == FileKind.YAML
    reported: set[tuple[str, ...]] = set()
    overridden = ReplacedAtDeploy(ctx.project, document.path)
    for tree in document.trees:
        if tree.kind != "map":
            continue
        if tree.scalar("kind") == "Kustomization" or name in ("kustomization.yaml", "kustomization.yml"):
            yield from _kustomize_images(tree, ctx.config, reported)
            continue
        if _is_workload_document(tree) or _is_rest_body(tree):
            yield from _declared_images(tree, ctx.config, reported, _own_artifacts(tree, overridden))
            continue
        if document.kind != FileKind.YAML:
            continue
        for _path, node in walk(tree):
            if node.kind != "map":
                continue
            for key, child in node.items():
                if key != "image" and not (is_values and key.lower().endswith("image")):
                    continue
                if child.kind == "map":
                    yield from _helm_image(child, ctx.config, reported)
                elif is_values and child.kind == "scalar" and isinstance(child.value, str) and (
                        "/" in child.value or ":" in child.value):
                    yield from image_problems(child.located(), child.value, ctx.config, reported=reported)
