"""Recognise credentials in one value: token regexes (ours for ML services, detect-secrets'
regex plugins for the rest), private-key blocks, credentials in URLs, and high-entropy
literals under secret-named keys.

Speed: a single combined prefilter regex decides whether a value can hold a token at all;
only values that pass it meet the individual regexes, and detect-secrets is imported only
when a value carries one of the prefixes that only its plugins know.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from functools import lru_cache
from typing import Any
from typing import Iterator
from typing import NamedTuple

from spikelint.secrets.context import KeyClass
from spikelint.secrets.context import NEUTRAL
from spikelint.secrets.context import classify_key
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_public_value
from spikelint.secrets.context import is_token_placeholder
from spikelint.secrets.context import key_words
from spikelint.secrets.context import literal_secret_under_key
from spikelint.secrets.context import looks_random


class Secret(NamedTuple):
    """A credential found in a scanned string: its text, its type and where it sits in the string."""

    value: str
    type: str
    start: int
    end: int


# Boundaries that also hold next to ``_`` and ``-`` (``\b`` does not).
B = r"(?<![A-Za-z0-9_-])"
E = r"(?![A-Za-z0-9_-])"


class TokenPattern(NamedTuple):
    type: str
    regex: re.Pattern[str]
    prefix_length: int  # characters of fixed prefix, skipped when judging placeholder bodies


def _pattern(type_: str, regex: str, prefix_length: int = 0, flags: int = 0) -> TokenPattern:
    return TokenPattern(type_, re.compile(regex, flags), prefix_length)


TOKEN_PATTERNS: tuple[TokenPattern, ...] = (
    _pattern("Hugging Face token", B + r"(?:hf_|api_org_)[A-Za-z0-9]{34}" + E, 3),
    _pattern("Weights & Biases API key", B + r"wandb_v1_[A-Za-z0-9]{27}_[A-Za-z0-9]{49}" + E, 9),
    _pattern("NVIDIA API key", B + r"nvapi-[A-Za-z0-9_-]{64}" + E, 6),
    _pattern("Anthropic API key", B + r"sk-ant-(?:api\d\d|admin\d\d|oat\d\d)-[\w-]{80,120}" + E, 14),
    _pattern("OpenAI API key", B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,200}" + E, 8),
    _pattern("OpenAI API key", B + r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}" + E, 3),
    _pattern("OpenAI API key", B + r"sk-(?!ant-|proj-|svcacct-|admin-)[A-Za-z0-9]{32,64}" + E, 3),
    _pattern("GitHub token", B + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}" + E, 4),
    _pattern("GitHub token", B + r"github_pat_[A-Za-z0-9_]{60,100}" + E, 11),
    _pattern("GitLab token", B + r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glptt|glimt|gloas)-[A-Za-z0-9_.-]{20,300}" + E, 6),
    _pattern("AWS access key ID", B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + E, 4),
    _pattern("Google API key", B + r"AIza[A-Za-z0-9_-]{35}" + E, 4),
    _pattern("Azure storage account key", r"AccountKey=([A-Za-z0-9+/]{86}==)", 0),
    _pattern("Azure SAS token", r"(?:^|[?&;\"'\s=])sv=\d{4}-\d\d-\d\d[^\s\"']*?[?&]sig=([A-Za-z0-9%+/=]{30,})", 0),
    _pattern("Slack token", B + r"xox[abposre]-[0-9A-Za-z-]{10,}" + E, 5),
    _pattern("Slack webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}", 0),
    _pattern("Stripe key", B + r"(?:sk|rk)_live_[0-9A-Za-z]{24,99}" + E, 8),
    _pattern("JSON Web Token", B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + E, 3),
    _pattern("NGC API key", B + r"nvapi-[A-Za-z0-9_-]{40,63}" + E, 6),
    _pattern("Databricks token", B + r"dapi[0-9a-f]{32}(?:-\d)?" + E, 4),
    _pattern("Replicate token", B + r"r8_[A-Za-z0-9]{37}" + E, 3),
    _pattern("Groq API key", B + r"gsk_[A-Za-z0-9]{52}" + E, 4),
    _pattern("Perplexity API key", B + r"pplx-[A-Za-z0-9]{48}" + E, 5),
    _pattern("npm token", B + r"npm_[A-Za-z0-9]{36}" + E, 4),
    _pattern("PyPI token", B + r"pypi-AgE[A-Za-z0-9_-]{70,}" + E, 8),
)
PRIVATE_KEY = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"(?:\\n|\s)*(?:[A-Za-z-]+: [^\n\\]*(?:\\n|\n)\s*)*((?:[A-Za-z0-9+/=]|\\n|\s){40,})")
PUTTY_KEY = re.compile(r"PuTTY-User-Key-File-\d+:.*?Private-Lines:\s*\d+\s+([A-Za-z0-9+/=\s]{40,})", re.DOTALL)
# ``scheme://user:password@`` and ``scheme://TOKEN@``
URL_USERINFO = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://(?P<userinfo>[^\s/?#@\"'<>(){}\[\]`]{1,300})@(?=[\w\[$])")

# One pass of this over a value decides whether any of the regexes above can match.
PREFILTER = re.compile(
    r"hf_|api_org_|wandb_v1_|nvapi-|sk-|gh[pousr]_|github_pat_|gl(?:pat|dt|ft|soat|rt|cbt|ptt|imt|oas)-|"
    r"A3T|AKIA|ASIA|ABIA|ACCA|AIza|AccountKey=|sig=|xox|hooks\.slack\.com|_live_|eyJ|PRIVATE KEY|PuTTY-User|"
    r"dapi|r8_|gsk_|pplx-|npm_|pypi-|://[^\s/@]{1,300}@")
# Prefixes that only detect-secrets' plugins recognise (checked before importing detect-secrets).
DETECT_SECRETS_PREFILTER = re.compile(
    r"AKC[A-Za-z0-9]|GR1348941|glagent-|_authToken|SG\.[\w-]{22}\.|sq0csp-|AC[a-z0-9]{32}|SK[a-z0-9]{32}|"
    r"\d{8,10}:[\w-]{35}|[MNO][\w-]{23,25}\.[\w-]{6}\.|[0-9a-z]{32}-us\d")
# The detect-secrets plugins worth running on values (the keyword, entropy and IP plugins
# are replaced by our key-aware logic; the IBM/Cloudant/SoftLayer ones by the same logic).
DETECT_SECRETS_PLUGINS = (
    ("detect_secrets.plugins.artifactory", "ArtifactoryDetector"),
    ("detect_secrets.plugins.discord", "DiscordBotTokenDetector"),
    ("detect_secrets.plugins.gitlab_token", "GitLabTokenDetector"),
    ("detect_secrets.plugins.mailchimp", "MailchimpDetector"),
    ("detect_secrets.plugins.npm", "NpmDetector"),
    ("detect_secrets.plugins.sendgrid", "SendGridDetector"),
    ("detect_secrets.plugins.square_oauth", "SquareOAuthDetector"),
    ("detect_secrets.plugins.telegram_token", "TelegramBotTokenDetector"),
    ("detect_secrets.plugins.twilio", "TwilioKeyDetector"),
    ("detect_secrets.plugins.github_token", "GitHubTokenDetector"),
    ("detect_secrets.plugins.openai", "OpenAIDetector"),
    ("detect_secrets.plugins.stripe", "StripeDetector"),
    ("detect_secrets.plugins.slack", "SlackDetector"),
    ("detect_secrets.plugins.aws", "AWSKeyDetector"),
    ("detect_secrets.plugins.azure_storage_key", "AzureStorageKeyDetector"),
    ("detect_secrets.plugins.pypi_token", "PypiTokenDetector"),
    ("detect_secrets.plugins.jwt", "JwtTokenDetector"),
)
# Keys whose value is a W&B key when it is 40 hex digits (``wandb.login(key=…)``, ``WANDB_API_KEY``).
_WANDB_HEX = re.compile(r"^[0-9a-f]{40}$")
_AWS_SECRET = re.compile(r"^[A-Za-z0-9/+]{40}$")
_BEARER = re.compile(r"^(?:Bearer|Basic|token|Token|bearer|basic)\s+(\S{8,})$")


@lru_cache(maxsize=1)
def _detect_secrets_plugins() -> tuple[Any, ...]:
    """Instances of detect-secrets' regex plugins (imported on first need: ~0.1 s)."""
    import importlib

    plugins = []
    for module_name, class_name in DETECT_SECRETS_PLUGINS:
        try:
            plugins.append(getattr(importlib.import_module(module_name), class_name)())
        except (ImportError, AttributeError, TypeError):  # an older or newer detect-secrets
            continue
    return tuple(plugins)


def _valid_jwt(token: str) -> bool:
    """Header and payload must be base64url JSON (as detect-secrets checks)."""
    for part in token.split(".")[:2]:
        try:
            padded = part + "=" * (-len(part) % 4)
            json.loads(base64.urlsafe_b64decode(padded.encode("ascii")).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, binascii.Error):
            return False
    return True


def _token_secrets(text: str) -> Iterator[Secret]:
    for pattern in TOKEN_PATTERNS:
        for match in pattern.regex.finditer(text):
            group = 1 if pattern.regex.groups else 0
            value = match.group(group)
            body = value[pattern.prefix_length:]
            if is_token_placeholder(body):
                continue
            if pattern.type == "JSON Web Token" and not _valid_jwt(value):
                continue
            yield Secret(value, pattern.type, match.start(group), match.end(group))


def _private_keys(text: str) -> Iterator[Secret]:
    for match in PRIVATE_KEY.finditer(text):
        body = _PEM_BODY.match(text, match.end())
        if body is None:
            continue
        material = re.sub(r"\\n|\s", "", body.group(1))
        if len(material) < 40 or is_token_placeholder(material[:40]):
            continue
        yield Secret(text[match.start():body.end(1)].rstrip(), "private key", match.start(), body.end(1))
    if "PuTTY-User" in text:
        for match in PUTTY_KEY.finditer(text):
            yield Secret(match.group(0).rstrip(), "private key", match.start(), match.end())


def url_credentials(text: str) -> Iterator[Secret]:
    """``https://user:password@host`` (the password) and ``https://TOKEN@host`` (the token)."""
    for match in URL_USERINFO.finditer(text):
        userinfo = match.group("userinfo")
        start = match.start("userinfo")
        if ":" in userinfo:
            user, _, password = userinfo.partition(":")
            offset = start + len(user) + 1
            if not password or is_placeholder(password) or is_placeholder(user + ":" + password):
                continue
            if password.isdigit() and len(password) <= 5:  # ``host:port``-like mistakes
                continue
            kind = "password in URL" if not user.lower() in ("x-access-token", "oauth2", "gitlab-ci-token",
                                                              "x-token-auth", "token") else "token in URL"
            yield Secret(password, kind, offset, offset + len(password))
        elif looks_random(userinfo, 20) and not is_placeholder(userinfo):
            yield Secret(userinfo, "token in URL", start, start + len(userinfo))


def _plugin_secrets(text: str) -> Iterator[Secret]:
    for plugin in _detect_secrets_plugins():
        try:
            found = list(plugin.analyze_string(text))
        except Exception:  # noqa: BLE001 - a plugin bug must not stop the scan
            continue
        for value in found:
            value = value.strip().strip("\"'")
            if len(value) < 12 or is_token_placeholder(value[4:]):
                continue
            if plugin.secret_type == "Artifactory Credentials" and not looks_random(value, 12):
                continue
            start = text.find(value)
            if start >= 0:
                yield Secret(value, plugin.secret_type, start, start + len(value))


def without_overlaps(found: list[Secret]) -> list[Secret]:
    """Earlier detectors win; a later match overlapping an earlier one is the same secret."""
    kept: list[Secret] = []
    for secret in found:
        if any(secret.start < other.end and other.start < secret.end for other in kept):
            continue
        kept.append(secret)
    return kept


def token_secrets(text: str) -> list[Secret]:
    """Secrets recognisable by shape alone, wherever they are written."""
    found: list[Secret] = []
    if PREFILTER.search(text):
        found.extend(_token_secrets(text))
        if "PRIVATE KEY" in text or "PuTTY-User" in text:
            found.extend(_private_keys(text))
        if "@" in text:
            found.extend(url_credentials(text))
    if DETECT_SECRETS_PREFILTER.search(text):
        found.extend(_plugin_secrets(text))
    return without_overlaps(found)


def is_placeholder_value(value: str) -> bool:
    """A placeholder, unless a token detector recognises it (``hf_EXAMPLE…`` has the real shape)."""
    return is_placeholder(value) and not token_secrets(value.strip().strip("'\""))


def type_for_key(key: str, value: str) -> str:
    """Name what a value under a secret-named key is (for messages)."""
    words = key_words(key)
    joined = "".join(words)
    if "wandb" in joined and _WANDB_HEX.match(value):
        return "Weights & Biases API key"
    if "aws" in words and _AWS_SECRET.match(value):
        return "AWS secret access key"
    if classify_key(key).password:
        return "password"
    if "token" in joined:
        return "token"
    if "key" in words or "apikey" in joined:
        return "API key"
    return "secret"


def find_secrets(text: str, key: str = "", key_class: KeyClass | None = None) -> list[Secret]:
    """Every credential in ``text``, a value written under ``key`` (``""`` when unknown)."""
    if not isinstance(text, str) or not text:
        return []
    found = token_secrets(text)
    kind = key_class if key_class is not None else (classify_key(key) if key else NEUTRAL)
    if found or not kind.secret:
        return found
    return keyed_secret(text, key, kind)


def keyed_secret(text: str, key: str, kind: KeyClass, prose: bool = False) -> list[Secret]:
    """A literal under a secret-named key: high-entropy for tokens, any real literal for passwords."""
    candidate = text.strip()
    bearer = _BEARER.match(candidate)
    if bearer:
        candidate = bearer.group(1)
    candidate = candidate.strip("'\"")
    if is_public_value(candidate, kind) or not literal_secret_under_key(candidate, kind, prose):
        return []
    start = text.find(candidate)
    return [Secret(candidate, type_for_key(key, candidate), start, start + len(candidate))]


def wandb_login_key(text: str) -> bool:
    """A 40-hex W&B key (the legacy shape has no prefix, so only its context identifies it)."""
    return bool(_WANDB_HEX.match(text.strip().strip("'\"")))
