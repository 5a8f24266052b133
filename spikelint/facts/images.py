"""Container image references: ``[registry[:port]/]path[:tag][@algorithm:digest]``.

Follows the distribution reference grammar: the first path component is a registry only
when it contains a '.' or ':' or is ``localhost`` (or an IPv6 literal in brackets), so
``harbor.example.org:5000/ml/train`` has no tag while ``ml/train:5000`` does.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex

DOCKER_HUB = "docker.io"
DOCKER_HUB_ALIASES = frozenset(("docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"))
DIGEST = lazy_regex(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")
TAG = lazy_regex(r"^[\w][\w.-]{0,127}$")
SPACE = lazy_regex(r"\s")
TEMPLATE_MARKERS = lazy_regex(r"\$\{|\$\(|\{\{|\$[A-Za-z_0-9@*]|%\{|<[A-Za-z_-]+>")  # ``$1``: a function's argument
LITERAL_DIGEST = lazy_regex(r"@[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")
# documented stand-ins a user replaces before running: PLACEHOLDER_IMAGE, CHANGE_ME, REPLACE_ME, your-image
PLACEHOLDER_WORDS = lazy_regex(r"placeholder|change[_-]?me|replace[_-]?me|your[_-](?:image|registry|repo)",
                               re.IGNORECASE)
PLACEHOLDER_HOSTS = ("example.com",)  # RFC 2606 documentation domain: example.com/… is never pulled
# the parts of a reference an ALL-CAPS stand-in can take: host labels, path components, the tag
REFERENCE_PARTS = lazy_regex(r"[/:.@-]")
CAPITALS = lazy_regex(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")
LETTERS = lazy_regex(r"^[A-Z]+$")
# the words a stand-in names what belongs in its place with (IMAGE_TAG, AWS_ACCOUNT, REGISTRY)
PLACEHOLDER_TOKENS = frozenset(("TAG", "IMAGE", "VERSION", "NAME", "REGISTRY", "REPO", "REPOSITORY", "ACCOUNT",
                                "REGION", "PROJECT"))
VARIABLE_NAMES = lazy_regex(r"\$\{\s*([A-Za-z_][A-Za-z0-9_]*)|\$\(\s*([A-Za-z_][A-Za-z0-9_]*)|"
                            r"\{\{-?\s*([^}]*?)\s*-?\}\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*])|%\{([^}]*)\}|<([A-Za-z_-]+)>")
TAG_SEPARATORS = "-_."


class ImageRef(NamedTuple):
    text: str
    registry: str  # host[:port]; docker.io when none is written
    repository: str  # path without registry
    tag: str | None
    digest: str | None
    explicit_registry: bool


class ImageSyntaxError(ValueError):
    """Not an image reference at all (spaces, empty, malformed digest)."""


def is_unresolved(text: str) -> bool:
    """A template or variable that cannot be resolved statically."""
    return bool(TEMPLATE_MARKERS.search(text))


def is_placeholder(text: str) -> bool:
    """A documented stand-in (``PLACEHOLDER_IMAGE``, ``CHANGE_ME``, ``example.com/…``), not a real image."""
    reference = text.strip()
    if PLACEHOLDER_WORDS.search(reference) or placeholder_parts(reference):
        return True
    host = reference.split("/", 1)[0].split(":", 1)[0].lower() if "/" in reference else ""
    return any(host == name or host.endswith("." + name) for name in PLACEHOLDER_HOSTS)


# a run of one character typed where an account id or name goes
FILLER = lazy_regex(r"([xX0])\1{5,}")


def placeholder_parts(text: str) -> tuple[str, ...]:
    """The ALL-CAPS stand-ins written where a name or tag goes: ``trainer:IMAGE_TAG``, ``x:TAG``,
    ``IMAGE_NAME``, ``CONTAINER_IMAGE``, ``ACCOUNT_ID.dkr.ecr.…``.

    A part (host label, path component or tag) is a stand-in when it is an upper-case identifier
    that either has one of the words of :data:`PLACEHOLDER_TOKENS` (``TAG``, ``IMAGE``, ``VERSION``,
    ``NAME``…) as an underscore-separated piece, or joins at least two letter-only pieces with
    underscores (``YOUR_IMAGE``, ``PROJECT_ID``).  A single upper-case word that is not one of those
    (``LATEST``, ``V1``, ``GPU``), or one word with numbers (``RELEASE_1_2``), is a real tag: tags may
    be upper case, and the mutable list is compared case-insensitively, so ``x:LATEST`` stays SPK101.
    Lower-case words are stand-ins only when they are the bare word ``tag`` or ``version``
    (``example/ray:tag``) or a filler of one repeated letter or digit (``xxxxxxxxxxxx.dkr.ecr…``,
    ``000000000000``); ``x:image_tag`` is judged as a tag.
    """
    found: list[str] = []
    for part in REFERENCE_PARTS.split(text):
        if part in found:
            continue
        if FILLER.fullmatch(part) or part in ("tag", "version"):  # ``xxxxxxxxxxxx.dkr.ecr…``, ``example/ray:tag``
            found.append(part)
            continue
        if not CAPITALS.match(part):
            continue
        pieces = part.split("_")
        if any(piece in PLACEHOLDER_TOKENS for piece in pieces) or sum(bool(LETTERS.match(p)) for p in pieces) >= 2:
            found.append(part)
    return tuple(found)


def unresolved_names(text: str) -> tuple[str, ...]:
    """The variables a reference is built from (``${REGISTRY}/x:${TAG}`` -> REGISTRY, TAG), for one finding each."""
    names = []
    for match in VARIABLE_NAMES.finditer(text):
        name = next(group for group in match.groups() if group is not None)
        if name not in names:
            names.append(name)
    return tuple(names)


def mutable_tag_word(tag: str, mutable: frozenset[str], immutable: re.Pattern[str]) -> str | None:
    """The mutable word a tag floats with: the tag itself, or a prefix/suffix joined by ``-``, ``_`` or ``.``.

    ``latest-gpu``, ``nightly-cu121`` and ``vllm011.latest`` float like ``latest``; a tag whose
    remainder is itself immutable (``nightly-20240105``, ``12.4.1-devel``) names one build and
    is left to the version checks; ``9.0-devel`` floats (rules.md: a tag that ends with a mutable
    word counts, and ``9.0`` alone names no one build).
    """
    lowered = tag.lower()
    if lowered in mutable:
        return lowered
    for word in _in_order(mutable):
        if len(lowered) <= len(word) + 1:
            continue
        if lowered.startswith(word) and lowered[len(word)] in TAG_SEPARATORS:
            rest = tag[len(word) + 1:]
        elif lowered.endswith(word) and lowered[-len(word) - 1] in TAG_SEPARATORS:
            rest = tag[:-len(word) - 1]
        else:
            continue
        if not immutable.match(rest):
            return word
    return None


@lru_cache(maxsize=8)
def _in_order(words: frozenset[str]) -> tuple[str, ...]:
    """The configured mutable words in a fixed order (a configuration has one set; sorted once)."""
    return tuple(sorted(words))


def has_literal_digest(text: str) -> bool:
    """The reference ends in a written-out digest (``${REGISTRY}/trainer@sha256:…`` is pinned even unresolved)."""
    return bool(LITERAL_DIGEST.search(text.strip()))


def parse_image(text: str) -> ImageRef:
    reference = text.strip()
    if not reference or SPACE.search(reference):
        raise ImageSyntaxError(f"not an image reference: {text!r}")
    name, _, digest = reference.partition("@")
    if digest and not DIGEST.match(digest):
        raise ImageSyntaxError(f"malformed digest in {text!r}")
    registry = ""
    remainder = name
    if name.startswith("["):  # IPv6 literal registry
        close = name.find("]")
        slash = name.find("/", close)
        if close == -1 or slash == -1:
            raise ImageSyntaxError(f"malformed registry in {text!r}")
        registry, remainder = name[:slash], name[slash + 1:]
    else:
        first, separator, rest = name.partition("/")
        if separator and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
            registry, remainder = first, rest
    last_slash = remainder.rfind("/")
    colon = remainder.rfind(":")
    tag = None
    if colon > last_slash:
        remainder, tag = remainder[:colon], remainder[colon + 1:]
        if not tag or not TAG.match(tag):
            raise ImageSyntaxError(f"malformed tag in {text!r}")
    if not remainder:
        raise ImageSyntaxError(f"no repository in {text!r}")
    explicit = bool(registry)
    if not registry or registry.lower() in DOCKER_HUB_ALIASES:
        registry = DOCKER_HUB
        if "/" not in remainder:
            remainder = f"library/{remainder}"
    return ImageRef(reference, registry.lower(), remainder, tag, digest or None, explicit)


def registry_allowed(image: ImageRef, allowed: tuple[str, ...]) -> bool:
    """An entry is a host (``harbor.example.org``), a host with port, or a host/path prefix."""
    full = f"{image.registry}/{image.repository}"
    for entry in allowed:
        entry = entry.lower().rstrip("/")
        if entry in DOCKER_HUB_ALIASES:
            entry = DOCKER_HUB
        if image.registry == entry or image.registry.split(":")[0] == entry or full.startswith(entry + "/"):
            return True
    return False
