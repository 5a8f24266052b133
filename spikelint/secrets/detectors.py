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
import bisect
import json
import re
from functools import lru_cache
from typing import Any
from typing import Iterator
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex
from spikelint.secrets.context import KeyClass
from spikelint.secrets.context import NEUTRAL
from spikelint.secrets.context import classify_key
from spikelint.secrets.context import is_documented_public_value
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_public_value
from spikelint.secrets.context import is_token_placeholder
from spikelint.secrets.context import key_words
from spikelint.secrets.context import literal_secret_under_key
from spikelint.secrets.context import looks_random
from spikelint.secrets.context import shannon_entropy


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
    starts: tuple[str, ...]  # the literals a match holds at ``back`` characters from its start
    back: int = 0


def _pattern(type_: str, regex: str, prefix_length: int, starts: tuple[str, ...], back: int = 0,
             flags: int = 0) -> TokenPattern:
    return TokenPattern(type_, lazy_regex(regex, flags), prefix_length, starts, back)


GITLAB_PREFIXES = ("glpat", "gldt", "glft", "glsoat", "glrt", "glcbt", "glptt", "glimt", "gloas", "glffct", "glagent",
                   "glwt")
TOKEN_PATTERNS: tuple[TokenPattern, ...] = (
    _pattern("Hugging Face token", B + r"(?:hf_|api_org_)[A-Za-z0-9]{34}" + E, 3, ("hf_", "api_org_")),
    _pattern("Weights & Biases API key", B + r"wandb_v1_[A-Za-z0-9]{27}_[A-Za-z0-9]{49}" + E, 9, ("wandb_v1_",)),
    _pattern("NVIDIA API key", B + r"nvapi-[A-Za-z0-9_-]{64}" + E, 6, ("nvapi-",)),
    _pattern("NGC API key", B + r"nvapi-[A-Za-z0-9_-]{40,63}" + E, 6, ("nvapi-",)),
    _pattern("Anthropic API key", B + r"sk-ant-(?:api\d\d|admin\d\d|oat\d\d)-[\w-]{80,120}" + E, 14, ("sk-ant-",)),
    _pattern("OpenAI API key", B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,200}" + E, 8, ("sk-",)),
    _pattern("OpenAI API key", B + r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}" + E, 3, ("sk-",)),
    _pattern("OpenAI API key", B + r"sk-(?!ant-|proj-|svcacct-|admin-)[A-Za-z0-9]{32,64}" + E, 3, ("sk-",)),
    _pattern("GitHub token", B + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}" + E, 4,
             ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    _pattern("GitHub token", B + r"github_pat_[A-Za-z0-9_]{60,100}" + E, 11, ("github_pat_",)),
    _pattern("GitLab token", B + r"(?:" + "|".join(GITLAB_PREFIXES) + r")-[A-Za-z0-9_.-]{20,300}" + E, 6,
             tuple(prefix + "-" for prefix in GITLAB_PREFIXES)),
    _pattern("GitLab token", B + r"GR1348941[A-Za-z0-9_-]{20,64}" + E, 9, ("GR1348941",)),
    _pattern("AWS access key ID", B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + E, 4,
             ("A3T", "AKIA", "ASIA", "ABIA", "ACCA")),
    _pattern("Google API key", B + r"AIza[A-Za-z0-9_-]{35}" + E, 4, ("AIza",)),
    _pattern("Google OAuth client secret", B + r"GOCSPX-[A-Za-z0-9_-]{28}" + E, 7, ("GOCSPX-",)),
    _pattern("Azure storage account key", r"AccountKey=([A-Za-z0-9+/]{86}==)", 0, ("AccountKey=",)),
    _pattern("Azure SAS token", r"(?<![A-Za-z0-9_])sv=\d{4}-\d\d-\d\d[^\s\"'<>]{0,400}?[?&]sig=([A-Za-z0-9%+/=]{30,200})",
             0, ("sv=",)),
    _pattern("Azure AD client secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"
             r"(?![A-Za-z0-9_~.-])", 5, ("Q~",), back=4),
    _pattern("Slack token", B + r"xox[abposre]-[0-9A-Za-z-]{10,}" + E, 5,
             tuple(f"xox{letter}-" for letter in "abposre")),
    _pattern("Slack app token", B + r"xapp-\d-[A-Za-z0-9]{6,}-\d{6,}-[A-Za-z0-9]{20,}" + E, 5, ("xapp-",)),
    # a real webhook's path is 43+ characters (``T`` + 8-11, ``B`` + 8-11, a 24-character secret), as gitleaks reads it;
    # a shorter one in documentation is made up
    _pattern("Slack webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{43,}", 0,
             ("hooks.slack.com/",)),
    _pattern("Vault token", B + r"hv[sb]\.[A-Za-z0-9_-]{90,300}" + E, 4, ("hvs.", "hvb.")),
    _pattern("Stripe key", B + r"(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{10,99}" + E, 8,
             ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_")),
    _pattern("Stripe webhook secret", B + r"whsec_[A-Za-z0-9+/=]{32,80}" + E, 6, ("whsec_",)),
    _pattern("GitLab session cookie", r"_gitlab_session=([0-9a-z]{32})(?![0-9a-z])", 0, ("_gitlab_session=",)),
    # signed (three parts) or unsigned (``alg: none``, a trailing dot): the claims are the credential
    _pattern("JSON Web Token", B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,}" + E + "|(?![A-Za-z0-9_-]))",
             3, ("eyJ",)),
    _pattern("Databricks token", B + r"dapi[0-9a-f]{32}(?:-\d)?" + E, 4, ("dapi",)),
    _pattern("Replicate token", B + r"r8_[A-Za-z0-9]{37}" + E, 3, ("r8_",)),
    _pattern("Groq API key", B + r"gsk_[A-Za-z0-9]{52}" + E, 4, ("gsk_",)),
    _pattern("Perplexity API key", B + r"pplx-[A-Za-z0-9]{48}" + E, 5, ("pplx-",)),
    _pattern("LangSmith API key", B + r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}" + E, 8, ("lsv2_pt_", "lsv2_sk_")),
    _pattern("Docker Hub token", B + r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,40}" + E, 9, ("dckr_pat_", "dckr_oat_")),
    _pattern("npm token", B + r"npm_[A-Za-z0-9]{36}" + E, 4, ("npm_",)),
    _pattern("PyPI token", B + r"pypi-AgE[A-Za-z0-9_-]{70,}" + E, 8, ("pypi-AgE",)),
    _pattern("Mailgun API key", B + r"key-[0-9a-f]{32}" + E, 4, ("key-",)),
    _pattern("Mailgun public key", B + r"pubkey-[0-9a-f]{32}" + E, 7, ("pubkey-",)),
    # long-lived: ``ABSK`` + base64 of ``BedrockAPIKey-…``; short-lived: base64 of ``bedrock.amazonaws.com``…
    _pattern("Amazon Bedrock API key", B + r"ABSKQmVkcm9ja0FQSUtleS[0-9A-Za-z+/]{90,300}={0,2}(?![A-Za-z0-9+/=_-])", 23,
             ("ABSKQmVkcm9ja0FQSUtleS",)),
    _pattern("Amazon Bedrock API key", B + r"bedrock-api-key-" + r"YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%_-]*", 16,
             ("bedrock-api-key-",)),
    _pattern("Sendinblue API key", B + r"x(?:keysib|smtpsib)-[0-9a-f]{64}-[A-Za-z0-9]{16}" + E, 8,
             ("xkeysib-", "xsmtpsib-")),
    _pattern("Defined Networking API token", B + r"dnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}" + E, 6, ("dnkey-",),
             flags=re.IGNORECASE),
    _pattern("Cohere API key", r"(?i:cohere|co_api_key)[\w.-]{0,20}[\"']?[ \t]*(?:=|:=|:|,|=>)[ \t]*[\"'`]?"
             r"((?=[a-z0-9]{0,39}[A-Z])(?=[A-Z0-9]{0,39}[a-z])[A-Za-z0-9]{40})(?![A-Za-z0-9_-])", 0,
             ("cohere", "Cohere", "COHERE", "co_api_key", "CO_API_KEY")),
)
PRIVATE_KEY = lazy_regex(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = lazy_regex(r"(?:\\n|\s)*(?:[A-Za-z-]+: [^\n\\]{0,300}(?:\\n|\n)\s*){0,10}((?:[A-Za-z0-9+/=]|\\n|\s){40,})")
PUTTY_KEY = lazy_regex(r"PuTTY-User-Key-File-\d+:.{0,3000}?Private-Lines:\s*\d+\s+([A-Za-z0-9+/=\s]{40,})", re.DOTALL)
# ``scheme://user:password@`` and ``scheme://TOKEN@`` (a ``#`` in a password is often left unescaped)
URL_USERINFO = lazy_regex(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://(?P<userinfo>[^\s/?@\"'<>(){}\[\]`]{1,300})@(?=[\w\[$])")

# the literals every token shape holds, by first character (a candidate is checked only where one occurs)
_STARTS: dict[str, list[tuple[str, TokenPattern]]] = {}
for _token_pattern in TOKEN_PATTERNS:
    for _literal in _token_pattern.starts:
        _STARTS.setdefault(_literal[0], []).append((_literal, _token_pattern))


def _trie_regex(words: list[str]) -> str:
    """An alternation of literals factored by common prefix (``hf_|hooks…`` -> ``h(?:f_|ooks…)``):
    the regex engine then tries one branch per position instead of every literal."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for character in word:
            node = node.setdefault(character, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(character) + emit(child) for character, child in sorted(node.items()) if character]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:
            return ("(?:" + body + ")?") if len(branches) == 1 and len(body) > 1 else body + "?"
        return body

    # The root stays a bare alternation: wrapped in a group, ``re`` cannot skip ahead to the
    # literals' first characters, and a search over a file takes twice as long.
    return "|".join(re.escape(character) + emit(child) for character, child in sorted(trie.items()))


CANDIDATES = lazy_regex(_trie_regex(sorted({literal for pattern in TOKEN_PATTERNS for literal in pattern.starts})))
# One pass of this over a value decides whether any of the regexes above can match.
PREFILTER = lazy_regex(CANDIDATES.pattern + r"|PRIVATE KEY|PuTTY-User|://[^\s/@]{1,300}@|\.ey[A-Za-z0-9/\\_-]{17}")  # .ey: a JWT by shape
# Prefixes that only detect-secrets' plugins recognise (checked before importing detect-secrets).
# Telegram's is eight digits, a colon and 35 characters: a bare ``\d:`` matched every
# ``@sha256:`` digest, so each pinned image imported detect-secrets (~0.1 s) for nothing.  It
# starts at the colon, with the digits looked behind: started at a digit, it tried every digit
# of a file and made this search three times slower.
DETECT_SECRETS_PREFILTER = lazy_regex(
    r"AKC|_authToken|SG\.[\w-]{22}\.|sq0csp-|AC[a-z0-9]{32}|SK[a-z0-9]{32}|-us\d|:(?<=\d{8}:)[\w-]{35}|\.[\w-]{6}\.[\w-]{27}")
# … the literal part of it, cheap enough for megabytes of generated text
DETECT_SECRETS_LITERALS = lazy_regex(r"AKC|_authToken|SG\.|sq0csp-|-us\d")
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
_WANDB_HEX = lazy_regex(r"^[0-9a-f]{40}$")
_AWS_SECRET = lazy_regex(r"^[A-Za-z0-9/+]{40}$")
_BEARER = lazy_regex(r"^(?:Bearer|Basic|token|Token|bearer|basic)\s+(\S{8,})$")


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
    """Each token shape, tried only where one of its literals occurs (one pass over the text)."""
    covered = 0  # a candidate inside a token already found is part of it (``.eyJ`` in a JWT)
    for candidate in CANDIDATES.finditer(text):
        at = candidate.start()
        if at < covered:
            continue
        for literal, pattern in _STARTS.get(text[at], ()):
            if not text.startswith(literal, at) or at < pattern.back:
                continue
            match = pattern.regex.match(text, at - pattern.back)
            if match is None:
                continue
            secret = _token_match(text, pattern, match)
            if secret is not None:
                covered = max(covered, match.end())
                yield secret
                break


def _token_match(text: str, pattern: TokenPattern, match: re.Match[str]) -> Secret | None:
    group = 1 if pattern.regex.groups else 0
    value = match.group(group)
    start, end = match.start(group), match.end(group)
    if _placeholder_body(value, pattern) or _padded_prefix(value, pattern):
        return None
    if pattern.type == "JSON Web Token" and not _valid_jwt(value):
        return None
    if pattern.type == "Slack token" and not _slack_shaped(text, value, end):
        return None
    if pattern.type == "Slack webhook":
        for scheme in ("https://", "http://"):
            if text.startswith(scheme, start - len(scheme)):
                start -= len(scheme)
                value = scheme + value
                break
    return Secret(value, pattern.type, start, end)


def _placeholder_body(value: str, pattern: TokenPattern) -> bool:
    """The part after the prefix only pads the shape.  A Slack token's numeric ids may be typed
    (``xoxb-123456789012-…``): its secret is the last part, so that is what must look random."""
    body = value[pattern.prefix_length:]
    if pattern.type == "Slack token":
        *ids, secret = body.split("-")
        if ids and all(part.isdigit() for part in ids) and len(secret) >= 12:
            return is_token_placeholder(secret)
    if pattern.type == "Slack webhook":  # ``services/T00000000/B00000000/XXXXXXXX…``: the last part is the secret
        return is_token_placeholder(body.rstrip("/").rsplit("/", 1)[-1])
    return is_token_placeholder(body)


_SLACK_WORDS = lazy_regex(r"^(?:[A-Z][a-z]{2,}|[A-Z]{3,})+$")


def _slack_shaped(text: str, value: str, end: int) -> bool:
    """Slack's ids are 8+ digits and its secrets random: ``xoxp-1234-1234-…``, an id list padded
    with ``####``, ``xoxe.xoxp-1-SlackAppConfigurationAccessTokenHere`` only look the part."""
    if value.endswith("-") or text[end:end + 1] in ("#", "*", "<", "…"):
        return False
    parts = value[5:].split("-")
    legacy = value[:5] in ("xoxo-", "xoxs-") and len(parts) == 4 and all(part.isdigit() for part in parts[:3]) \
        and len(parts[3]) >= 16 and all(character in "0123456789abcdefABCDEF" for character in parts[3])
    if not legacy and any(part.isdigit() and 1 < len(part) < 8 for part in parts):
        return False
    last = parts[-1]
    return not (last.isalpha() and _SLACK_WORDS.match(last))  # capitalised words, not random letters


def _padded_prefix(value: str, pattern: TokenPattern) -> bool:
    """``xoxb-xoxb-my-bot-token``, ``sk-proj-REDACTED…``: the shape around a placeholder, not a token."""
    body = value[pattern.prefix_length:]
    word = value[:pattern.prefix_length].rstrip("-_").lower()
    # the prefix written again as a word of the body (``xoxb-xoxb-…``, ``hf_hf_…``), not letters
    # that happen to spell it (``hf_HFSdH…`` is a real token's random start)
    lowered = body.lower()
    at = lowered.find(word) if word else -1
    if 0 <= at <= 2 and (at + len(word) == len(lowered) or not lowered[at + len(word)].isalnum()):
        return True
    words = body.replace("-", " ").replace("_", " ")
    return " " in words.strip() and is_placeholder(words)


# A JWT's header is base64 of ``{"…`` (``eyJ``) or of ``{ "…``; some encoders use the standard
# alphabet (``/``).  Read by shape once the strict detector above has had its turn.
LOOSE_JWT = lazy_regex(r"(?<![A-Za-z0-9_/+-])ey[A-Za-z0-9]{17,}\.ey[A-Za-z0-9/\\_-]{17,}\."
                       r"(?:[A-Za-z0-9/\\_-]{10,}={0,2})?(?![A-Za-z0-9/\\_=-])")  # ``\/``: JSON escapes a slash
MIN_JWT_ENTROPY = 3.0


def _loose_jwts(text: str) -> Iterator[Secret]:
    for match in LOOSE_JWT.finditer(text):
        value = match.group(0)
        if value.startswith("eyJ") and _valid_jwt(value) or shannon_entropy(value) < MIN_JWT_ENTROPY:
            continue  # the strict detector has judged it already, or it repeats a few characters
        if is_token_placeholder(value[2:]):
            continue
        yield Secret(value, "JSON Web Token", match.start(), match.end())


# Mailgun's webhook signing key has no prefix: its shape counts where the text names Mailgun.
MAILGUN_SIGNING_KEY = lazy_regex(r"(?<![0-9a-zA-Z_-])[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9a-zA-Z_-])")


def _mailgun_signing_keys(text: str) -> Iterator[Secret]:
    for match in MAILGUN_SIGNING_KEY.finditer(text):
        if not is_token_placeholder(match.group(0)[:32]):
            yield Secret(match.group(0), "Mailgun signing key", match.start(), match.end())


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
    at = text.find("://")
    while at >= 0:
        match = URL_USERINFO.search(text, max(0, at - 21), at + 310)
        at = text.find("://", at + 3)
        if match is None:
            continue
        userinfo = match.group("userinfo")
        start = match.start("userinfo")
        if ":" in userinfo:
            user, _, password = userinfo.partition(":")
            offset = start + len(user) + 1
            if not password or is_placeholder(password) or is_placeholder(user + ":" + password):
                continue
            if password.isdigit() and len(password) <= 5:  # ``host:port``-like mistakes
                continue
            if password == "x-oauth-basic":  # GitHub's public marker: the token is the user name
                if looks_random(user, 20) and not is_placeholder(user) and not token_secrets(user):
                    yield Secret(user, "token in URL", start, start + len(user))
                continue
            kind = "password in URL" if user.lower() not in ("x-access-token", "oauth2", "gitlab-ci-token",
                                                              "x-token-auth", "token") else "token in URL"
            yield Secret(password, kind, offset, offset + len(password))
        elif (looks_random(userinfo, 20) and not is_placeholder(userinfo) and not _storage_container(text, start)
              and not _SENTRY_DSN.match(text, match.end("userinfo"))):
            yield Secret(userinfo, "token in URL", start, start + len(userinfo))


# object-store URLs name ``container@account`` before the host: ``abfss://<workspace-id>@onelake…``
_STORAGE_SCHEMES = ("abfss://", "abfs://", "wasbs://", "wasb://", "adl://")


# a Sentry DSN's user part is the project's public key: Sentry documents DSNs as safe to publish (they only let a
# client send events), and every SDK's setup code holds one
_SENTRY_DSN = lazy_regex(r"@o?\d*\.?ingest\.(?:[a-z]{2}\.)?sentry\.io/|@sentry\.io/")


def _storage_container(text: str, start: int) -> bool:
    """The user part of an Azure Data Lake / Blob URL is the container (a name or a GUID), not a token."""
    return text[max(0, start - 8):start].lower().endswith(_STORAGE_SCHEMES)


def _plugin_secrets(text: str, fast: bool = False) -> Iterator[Secret]:
    """detect-secrets' regex plugins; on long generated text only around their literal prefixes."""
    if fast or len(text) > PLUGIN_WINDOW:
        covered = 0
        for match in (DETECT_SECRETS_LITERALS if fast else DETECT_SECRETS_PREFILTER).finditer(text):
            if match.start() < covered:
                continue
            low = max(0, match.start() - 40)
            covered = match.end() + 200
            for secret in _plugin_secrets(text[low:covered]):
                yield secret._replace(start=secret.start + low, end=secret.end + low)
        return
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
            if start < 0:
                continue
            if plugin.secret_type == "Telegram Bot Token" and not _whole_telegram_token(text, start, len(value)):
                continue
            yield Secret(value, plugin.secret_type, start, start + len(value))


def _whole_telegram_token(text: str, start: int, length: int) -> bool:
    """The plugin's pattern has no boundaries: ``22153361153766284:Az…`` (17 digits) and
    ``clm08453852:AgencyIdentificationCodeContentType`` (an XML type name) matched inside longer words."""
    before = text[start - 1] if start > 0 else " "
    after = text[start + length] if start + length < len(text) else " "
    return not (before.isalnum() or before in "_-") and not (after.isalnum() or after in "_-")


def without_overlaps(found: list[Secret]) -> list[Secret]:
    """Earlier detectors win; a later match overlapping an earlier one is the same secret.

    Kept spans never overlap, so a sorted list of them needs only the two neighbours checked
    (n log n, where comparing with every kept span was quadratic on long texts).
    """
    kept: list[Secret] = []
    starts: list[int] = []
    ordered: list[Secret] = []
    for secret in found:
        index = bisect.bisect_right(starts, secret.start)
        if index > 0 and ordered[index - 1].end > secret.start:
            continue
        if index < len(ordered) and ordered[index].start < secret.end:
            continue
        if secret.start == secret.end and index > 0 and ordered[index - 1].start == secret.start:
            continue
        starts.insert(index, secret.start)
        ordered.insert(index, secret)
        kept.append(secret)
    return kept


def token_secrets(text: str, fast: bool = False) -> list[Secret]:
    """Secrets recognisable by shape alone, wherever they are written.

    ``fast``: generated or data content (megabyte lines), where detect-secrets' broad
    patterns run only around their literal prefixes.
    """
    found: list[Secret] = list(_token_secrets(text))
    if ".ey" in text:
        found.extend(_loose_jwts(text))
    if "ailgun" in text or "AILGUN" in text:
        found.extend(_mailgun_signing_keys(text))
    if "PRIVATE KEY" in text or "PuTTY-User" in text:
        found.extend(_private_keys(text))
    if "@" in text and "://" in text:
        found.extend(url_credentials(text))
    if fast or len(text) > LONG_TEXT:
        found.extend(_plugin_secrets(text, fast=True))
    elif DETECT_SECRETS_PREFILTER.search(text):
        found.extend(_plugin_secrets(text))
    return [secret for secret in without_overlaps(found) if not is_documented_public_value(secret.value)]


def typed_token_secrets(text: str) -> list[Secret]:
    """The secrets whose shape alone names their kind (prefixed tokens, JWTs, private keys): what a decoded value is
    scanned for, where no key name or context says more."""
    found: list[Secret] = list(_token_secrets(text))
    if ".ey" in text:
        found.extend(_loose_jwts(text))
    if "PRIVATE KEY" in text:
        found.extend(_private_keys(text))
    return [secret for secret in without_overlaps(found) if not is_documented_public_value(secret.value)]


PLUGIN_WINDOW = 2_000  # characters past which detect-secrets' plugins run only around their anchors
LONG_TEXT = 200_000  # characters past which detect-secrets' broad patterns run only around literals


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
    if CANDIDATES.match(candidate) and not token_secrets(candidate):
        return []  # a vendor prefix padded with a placeholder (``nvapi-YOUR-API-KEY``, ``ghp_xxxx…``)
    if is_public_value(candidate, kind) or not literal_secret_under_key(candidate, kind, prose):
        return []
    start = text.find(candidate)
    return [Secret(candidate, type_for_key(key, candidate), start, start + len(candidate))]


def wandb_login_key(text: str) -> bool:
    """A 40-hex W&B key (the legacy shape has no prefix, so only its context identifies it)."""
    return bool(_WANDB_HEX.match(text.strip().strip("'\"")))
