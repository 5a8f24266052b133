"""What a value's surroundings say about it: is its key secret-named, is it a placeholder, a
reference to a secret store, or a public value (digest, checksum, commit, id)?

Detectors only recognise shapes; these tables decide whether a shape in a given place is a
credential.  They are shared by every file kind so that YAML, JSON, scripts, notebooks and
image configs agree.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from functools import lru_cache
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex

# --------------------------------------------------------------------------- key names

_CAMEL = lazy_regex(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = lazy_regex(r"[^A-Za-z0-9]+")

# single words that name a credential
SECRET_WORDS = frozenset((
    "token", "secret", "password", "passwords", "passwd", "pwd", "pass", "apikeys", "passphrase", "passcode", "apikey", "apitoken",
    "credential", "credentials", "creds", "cred", "auth", "authtoken", "authkey", "accesskey", "secretkey",
    "privatekey", "clientsecret", "bearer", "pat", "hftoken", "hubtoken", "sessiontoken", "accesstoken",
    "refreshtoken", "authorization", "contrasena", "senha", "passwort",
))
# two consecutive words that name a credential (``api_key``, ``access_key`` …)
SECRET_PAIRS = frozenset((
    ("api", "key"), ("api", "keys"), ("access", "key"), ("access", "keys"), ("private", "key"), ("secret", "key"), ("auth", "key"),
    ("account", "key"), ("master", "key"), ("encryption", "key"), ("signing", "key"), ("client", "key"),
    ("service", "key"), ("wandb", "key"), ("license", "key"), ("storage", "key"), ("subscription", "key"),
    ("app", "key"), ("admin", "key"), ("sas", "key"), ("shared", "key"), ("ssh", "key"), ("deploy", "key"),
))
# words that turn a secret-named key into the *name*, *location* or *property* of a secret
NOT_SECRET_WORDS = frozenset((
    "name", "names", "file", "files", "filename", "path", "paths", "dir", "directory", "ref", "refs", "reference",
    "env", "envvar", "var", "variable", "limit", "limits", "length", "len", "count", "type", "types", "size", "url",
    "uri", "urls", "endpoint", "host", "hostname", "port", "id", "ids", "max", "min", "num", "number", "pad",
    "eos", "bos", "unk", "sep", "cls", "mask", "special", "tokenizer", "tokenizers", "vocab", "prefix", "suffix",
    "field", "template", "format", "enabled", "enable", "disable", "disabled", "required", "require", "use",
    "expires", "expiry", "expiration", "ttl", "timeout", "lifetime", "regex", "pattern", "mount", "mounts",
    "provider", "store", "manager", "backend", "policy", "existing", "class", "generator", "selector", "source",
    "from", "mode", "method", "methods", "header", "scheme", "strategy", "hash", "hashed", "salt", "rotation",
    "version", "key_ref", "keyref", "arn", "annotation", "label", "author", "authority", "authors", "secrets",
    "kind", "namespace", "volume", "volumes", "secretname", "secretref", "secretkeyref", "location", "command",
    "stdin", "prompt", "policy", "length", "budget", "per", "rate", "usage", "index", "position", "level",
    "list", "show", "print", "log", "validate", "verify", "check", "help", "description", "desc", "doc",
    "docs", "example", "examples", "placeholder", "default", "defaults", "fn", "func", "function", "callback",
    "cache", "cached", "parallelism", "dropout", "embedding", "embeddings", "emb", "logits", "weight", "weights",
    "selectors", "locator", "locators", "xpath", "css",  # a UI test's locators: ``password_selectors``
    "public", "csrf", "xsrf",  # ``publicToken``, ``csrf-token``: published or per-session by design
))
# keys naming a digest: a digest of a secret (``checksum/secret``) is a digest, not the secret
DIGEST_WORDS = frozenset(("sha", "sha1", "sha256", "sha512", "md5", "checksum", "checksums", "digest", "hash", "crc",
                          "fingerprint", "integrity"))
# keys whose values are public identifiers even when they look random
PUBLIC_WORDS = DIGEST_WORDS | frozenset((
    "etag", "revision", "rev", "commit", "commitid", "ref", "tag", "version", "id", "uuid", "guid", "run", "runid",
    "git",
))
PASSWORD_WORDS = frozenset(("password", "passwords", "passwd", "pwd", "pass", "passphrase", "passcode", "contrasena", "senha",
                            "passwort"))


def key_words(key: str) -> tuple[str, ...]:
    """``hfTokenFile`` / ``HF_TOKEN_FILE`` / ``hf-token.file`` -> ``('hf', 'token', 'file')``."""
    spaced = _CAMEL.sub("_", key)
    return tuple(word for word in _SEPARATORS.split(spaced.lower()) if word)


class KeyClass(NamedTuple):
    secret: bool  # the key names a credential (``api_key``, ``HF_TOKEN``, ``password``)
    password: bool  # … and a password, where any literal counts (not only high-entropy ones)
    public: bool  # the key names a public identifier (checksum, revision, id)


NEUTRAL = KeyClass(False, False, False)


@lru_cache(maxsize=4096)
def classify_key(key: str) -> KeyClass:
    """How a key name colours the value written under it."""
    if not key:
        return NEUTRAL
    words = key_words(key)
    if not words:
        return NEUTRAL
    joined = "".join(words)
    secret = any(word in SECRET_WORDS for word in words) or any(pair in SECRET_PAIRS for pair in zip(words, words[1:]))
    if not secret and joined in SECRET_WORDS:
        secret = True
    if not secret and len(words) == 1:  # ``hftoken``, ``wandbapikey``, ``dbpassword``
        secret = bool(_GLUED_SECRET.search(joined)) and not _GLUED_NOT_SECRET.search(joined)
    if secret and any(word in NOT_SECRET_WORDS or word in DIGEST_WORDS for word in words):
        secret = False  # ``checksum/secret``: a digest of a secret (a Helm annotation that rolls pods), not the secret
    public = any(word in PUBLIC_WORDS for word in words) and not secret
    password = secret and any(word in PASSWORD_WORDS for word in words)
    return KeyClass(secret, password, public)


_GLUED_SECRET = lazy_regex(r"(?:token|secret|passw(?:or)?d|apikey|accesskey|privatekey|secretkey|credential)$")
_GLUED_NOT_SECRET = lazy_regex(r"tokenizer|maxtoken|numtoken|padtoken|eostoken|bostoken")


# --------------------------------------------------------------------------- environment names (SPK202)

SECRET_ENV_NAME = lazy_regex(
    r"TOKEN(?!S|IZER)|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH(?!OR)")
NOT_SECRET_ENV_NAME = lazy_regex(
    r"(?:^|_)(?:MAX|NUM|MIN)_(?:\w*_)?TOKENS?(?:_|$)|TOKEN_(?:LIMIT|LENGTH|LEN|COUNT|ID|BUDGET|TYPE|TTL|EXPIR\w*)"
    r"|_(?:URL|URI|HOST|ENDPOINT|PORT|FILE|PATH|DIR|NAME|REF|MODE|TYPE|METHOD|ENABLED|DISABLED|REGION|PROVIDER"
    r"|SECRET_NAME|KEY_NAME|KEY_ID_FILE|USER|USERNAME|LOGIN|EMAIL|ISSUER|AUDIENCE|SCOPES?|REALM|DOMAIN|TENANT"
    r"|PROJECT|BUCKET|ALGORITHM|HEADER|PREFIX|TIMEOUT|RETRIES|EXPIRY|TTL|VERSION|LEVEL|SIZE|FORMAT|STRATEGY"
    r"|ROLE|ROLES|GROUP|GROUPS)$"
    r"|(?<!ACCESS_KEY)_ID$"
    r"|^(?:AUTH_URL|AUTH_TYPE|AUTH_MODE|AUTH_METHOD|AUTH_ENABLED|AUTH_DISABLED|OAUTHLIB_INSECURE_TRANSPORT"
    r"|HF_HUB_DISABLE_IMPLICIT_TOKEN|GOOGLE_APPLICATION_CREDENTIALS|AWS_SHARED_CREDENTIALS_FILE"
    r"|AWS_CONFIG_FILE|AZURE_AUTHORITY_HOST|HF_HUB_ENABLE_HF_TRANSFER|USE_AUTH_TOKEN)$"
    r"|DISABLE_\w*AUTH|AUTH\w*_DISABLE|SKIP_\w*AUTH|NO_AUTH")


@lru_cache(maxsize=4096)
def is_secret_env_name(name: str) -> bool:
    """Names SPK202 watches: ``HF_TOKEN``, ``WANDB_API_KEY``, ``DB_PASSWORD`` (not ``MAX_TOKENS``)."""
    upper = re.sub(r"[^A-Z0-9]+", "_", name.upper())
    return bool(SECRET_ENV_NAME.search(upper)) and not NOT_SECRET_ENV_NAME.search(upper)


# --------------------------------------------------------------------------- placeholders and references

_PLACEHOLDER_SHAPES = lazy_regex(
    r"""^(?:
        <[^<>]*>                      # <token>, <your-api-key>
      | \$\{[^}]*\}?                  # ${TOKEN}, ${oc.env:HF_TOKEN}, ${{ secrets.X }}
      | \$\([^)]*\)?                  # $(VAR), $(cat /run/secrets/x)
      | \$[A-Za-z_][A-Za-z0-9_]*      # $TOKEN
      | %[A-Za-z_][A-Za-z0-9_]*%      # %TOKEN%
      | %\([A-Za-z_]\w*\)[sd]         # %(token)s
      | %[sdr]                        # %s
      | \$(?:\d|[@*\#?])              # $1, $@
      | \{[A-Za-z_][\w.]*\}           # {token}
      | \[[A-Za-z _-]*\]              # [REDACTED]
      | [*x#.•…_-]+                   # ****, xxxx, ..., ----
      | (.)\1*                        # one repeated character
    )$""", re.VERBOSE | re.IGNORECASE)
# a value built from a variable: ``${PROJECT_ID}`` also when the reader stopped at its ``}`` (``pw-${PROJECT_ID``)
_TEMPLATE_INSIDE = lazy_regex(r"\{\{.*?\}\}|\{%.*?%\}|\$\{[A-Za-z_{][^}]*(?:\}|$)|\$\([A-Za-z_][^)]*\)|"
                              r"<[A-Za-z_][\w -]*>|\$[A-Z_][A-Z0-9_]{2,}")
# whole values that are clearly "fill this in" words (compared after dropping separators)
PLACEHOLDER_VOCABULARY = frozenset((
    "changeme", "change", "me", "replace", "replaceme", "todo", "tbd", "fixme", "dummy", "fake", "example",
    "examples", "sample", "test", "testing", "placeholder", "secret", "secrets", "password", "passwd", "token",
    "none", "null", "nil", "undefined", "empty", "redacted", "hidden", "masked", "your", "yours", "my", "our",
    "insert", "enter", "put", "add", "here", "the", "an", "api", "key", "hf", "huggingface", "openai",
    "wandb", "aws", "github", "gh", "gitlab", "access", "private", "value", "values", "xxx", "xxxx", "na",
    "default", "foo", "bar", "baz", "abc", "string", "str", "some", "generated", "goes", "must", "be", "set",
    "to", "with", "real", "actual", "valid", "this", "is", "not", "auth", "credentials", "credential", "pass",
    "pwd", "user", "username", "account", "id", "client", "anthropic", "nvidia", "ngc", "azure", "gcp", "slack",
    "bot", "of", "for", "and", "or", "in", "new", "secure", "strong", "super", "topsecret", "db", "database",
    "admin", "root", "org", "registry", "robot", "docker", "harbor", "s3", "minio", "mlflow", "neptune", "comet",
    "supersecret", "mysecret", "mypassword", "yourpassword", "yoursecret", "yourtoken", "mytoken", "yourkey",
    "mykey", "apikey", "accesskey", "secretkey", "privatekey", "authtoken", "accesstoken", "tokenhere",
    "keyhere", "secrethere", "passwordhere", "required", "optional", "unused", "invalid", "notset", "unset",
    "guest", "anonymous", "public", "demo", "dev", "local", "localhost", "postgres", "minio", "minioadmin", "mlflow",
    "grafana", "jupyter", "notebook", "airflow", "rabbitmq", "redis", "mysql", "mongo", "hf", "tok", "pw", "pwd",
))
_WORD_SPLIT = lazy_regex(r"[a-z]+|[0-9]+")
REFERENCE_PREFIXES = lazy_regex(
    r"^(?:SECRET:|secret:|secretref:|secretkeyref:|vault:|vault://|op://|sm://|ssm:|ssm://|awssm:|aws-sm:|"
    r"arn:aws:(?:secretsmanager|ssm|kms):|projects/[^/]+/secrets/|azurekeyvault:|keyvault:|akv:|gcpsm:|"
    r"env:|file:|@/|@\./|@~|ENC\[)", re.IGNORECASE)
_BOOLEAN_OR_NUMBER = lazy_regex(r"^(?:true|false|yes|no|on|off|null|none|nil|[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$",
                                re.IGNORECASE)
_PATH = lazy_regex(r"^(?:/|\./|\.\./|~/|[A-Za-z]:\\)|^[\w.-]+(?:/[\w.@-]+)+\.\w{1,8}$")
_URL = lazy_regex(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# a password *hash* in crypt(3)'s modular format, as Ansible's ``user`` module and htpasswd take it:
# ``$6$salt$hash`` (SHA-512), ``$2b$12$…`` (bcrypt), ``$y$…`` (yescrypt), ``$apr1$…``, ``$argon2id$v=19$…``
_PASSWORD_HASH = lazy_regex(r"^\$(?:1|2[abxy]|5|6|y|gy|7|apr1|argon2(?:id|i|d))\$[A-Za-z0-9./=,+-]*\$[A-Za-z0-9./$=,+-]{8,}$")
_NAME_LIKE = lazy_regex(r"^[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+$")
_SECRETISH_IN_NAME = lazy_regex(r"secret|token|cred|passw|key|auth|pwd")
# ``hamishivi_S2_API_KEY``, ``TEAM_HF_TOKEN``: words that end in what the stored secret is (a value never does)
_SECRET_NAME_WORDS = lazy_regex(r"^[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]{1,24})*[-_.](?:api[-_.]?)?"
                                r"(?:key|token|secret|password|passwd|credentials?)$", re.IGNORECASE)


_GLUED_DEFAULT = lazy_regex(r"^([a-z][a-z0-9]{3,23}?)\d{0,4}$")


def is_placeholder(value: str) -> bool:
    """``<token>``, ``${TOKEN}``, ``changeme``, ``xxxx``, ``***``, ``your-api-key-here``, empty."""
    text = value.strip().strip("'\"").strip()
    if not text:
        return True
    if _PLACEHOLDER_SHAPES.match(text) or _TEMPLATE_INSIDE.search(text):
        return True
    if _is_placeholder_words(_WORD_SPLIT.findall(text.lower())):
        return True
    glued = _GLUED_DEFAULT.match(text.lower())  # ``s3admin123``, ``minio123``: demo defaults
    return glued is not None and _is_vocabulary(glued.group(1))


def _is_placeholder_words(words: list[str]) -> bool:
    """Every word is a "fill this in" word or padding (``xxxx``), with at most four digits in all."""
    if not words:
        return False
    digits = 0
    for word in words:
        if word.isdigit():
            digits += 0 if len(set(word)) == 1 else len(word)
        elif len(word) < 2 or not (len(set(word)) == 1 or _is_vocabulary(word)):
            return False
    return digits <= 4


@lru_cache(maxsize=4096)
def _is_vocabulary(word: str) -> bool:
    """``mysecretpassword`` = my + secret + password: glued placeholder words count too."""
    if word in PLACEHOLDER_VOCABULARY:
        return True
    reachable = [True] + [False] * len(word)
    for end in range(2, len(word) + 1):
        reachable[end] = any(reachable[start] and word[start:end] in PLACEHOLDER_VOCABULARY
                             for start in range(max(0, end - 14), end - 1))
    return reachable[len(word)]


def is_token_placeholder(body: str) -> bool:
    """The part after a token prefix (``hf_…``) only pads the shape: ``xxxx…``, ``0000…``, ``<…>``,
    ``...``, a sequential fake (``abcdef…``, ``123456…``), a repeated unit or ``REDACTED``."""
    if not body:
        return True
    if any(mark in body for mark in ("...", "…", "<", ">", "{", "}", "*", "$")):
        return True
    distinct = set(body.lower())
    if len(distinct) <= 2 or distinct <= set("x0_-.#"):
        return True
    if "REDACTED" in body.upper():
        return True
    return _sequential_fake(body) or _repeats_a_unit(body) or is_typed_fake(body)


TYPED_SHARE = 0.7  # of the letters and digits
MIN_TYPED_RUN = 3


def is_typed_fake(text: str) -> bool:
    """Typed rather than random: most of its letters and digits sit in runs of three or more that
    repeat a character or count up by one (case folded, ``z`` to ``a`` and ``9`` to ``0`` included):
    ``111111111111``, ``abc123abc123…``, ``abc123def456…``, ``ABCdefGHI…XYZ123456789``.  In random
    text such runs are one character in a thousand; a documentation fake may end in a few
    keystrokes of its own (``…bcde-1234fghijklmnopby56aaaogaop…``), hence "most"."""
    alnum = sum(character.isalnum() for character in text)
    return alnum >= 8 and _typed_characters(text) >= TYPED_SHARE * alnum


def _typed_characters(text: str) -> int:
    covered = run = 0
    previous = ""
    for character in text:
        if run and _typed_step(previous, character):
            run += 1
        else:
            covered += run if run >= MIN_TYPED_RUN else 0
            run = 1 if character.isascii() and character.isalnum() else 0
        previous = character
    return covered + (run if run >= MIN_TYPED_RUN else 0)


def _typed_step(before: str, after: str) -> bool:
    """``after`` repeats ``before`` or follows it, within one class (digits, or letters case folded)."""
    if before.isdigit() and after.isdigit() and after.isascii():
        return (ord(after) - ord(before)) % 10 in (0, 1)
    if before.isalpha() and after.isalpha() and before.isascii() and after.isascii():
        return (ord(after.lower()) - ord(before.lower())) % 26 in (0, 1)
    return False


def _ascending_runs(length: int, alphabets: tuple[str, ...]) -> re.Pattern[str]:
    runs = {alphabet[start:start + length] for alphabet in alphabets for start in range(len(alphabet) - length + 1)}
    return lazy_regex("|".join(sorted(runs)))


_SEQUENTIAL_FAKE = _ascending_runs(8, ("0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
_SEQUENTIAL_DIGITS = _ascending_runs(6, ("0123456789",))


def _sequential_fake(body: str) -> bool:
    """``abcdefgh…``, ``0123456789…``: the body starts with a run of eight consecutive characters,
    or such runs make up half of it (a run at the end of random text is chance, or a typed fake)."""
    runs = list(_SEQUENTIAL_FAKE.finditer(body))
    return bool(runs) and (runs[0].start() == 0 or 8 * len(runs) * 2 >= len(body))


def _sequential_run(text: str) -> int:
    """8 when ``text`` holds a run of eight consecutive characters (``abcdefgh``, ``23456789``), else 0."""
    return 8 if _SEQUENTIAL_FAKE.search(text) else 0


def _repeats_a_unit(text: str) -> bool:
    """``abcabcabc…``, ``1a2b1a2b…``: a unit of at most eight characters written over and over
    (a text with period ``size`` equals itself shifted by ``size``)."""
    if len(text) < 16:
        return False
    return any(text[size:] == text[:-size] for size in range(1, 9))


# SHA-256 (first 32 hex digits) of values that vendors publish in their documentation: the
# Azurite/Azure Storage emulator account key, AWS's documented example secret key, the
# Google Cloud SDK's public OAuth client secret, the example Google API keys of the
# Firebase Android SDK's samples and tests (public by design: they ship in its source), the bearer
# token of Kubernetes' API conventions document (copied into many repositories' docs), and Ray's
# former built-in Redis password (ray_constants.py, replaced in Ray 2.3; still in its samples), and the
# public search-only API key Yarn's documentation site ships (yarnpkg/berry#6201).
# Hashes, so the project itself holds no key-shaped string.
PUBLIC_VALUE_HASHES = frozenset((
    "0011cc25eb4320717494d2703e8cba85", "78314b11be2e581549ac1c4f616563fa", "f0386f9be1fe905fb2f97a8daff11a9b",
    "0b476bdf9acf2123d547b5ae76f1e598", "2037abcaffb2b77785da716cf7ccff4f", "27a9a42931dff7eb2f8434e20a9bce97",
    "37f8f09bdf12c2f2eae4ead7273a62dd", "3a8b61d0f636b007840c0d40ba12bcf4", "3f370c9dd8225c63b5c77de1f785edc9",
    "49f777db995e8260da7ca9ffdf0c08d6", "4c98242dcadc8b29005c6b4aad526552", "8731261cb72d86267a32a532ebd3df42",
    "a19f89ab3555eac10c40741f6df79ecf", "a6c814bc555ae62c7bd8b58ec07bf559", "dc0fcf046c61640cbd1e8b999ada3262",
    "e4a5542bb7fd7b67e943c71ad29c34b5", "ea9bb1082cf95663f5faca23b8b15ef2", "eb540d2b6ee2a0a47c5779bc8a014178",
    "f56e323494a6ffc2064e7a955908957d", "6ee68adb5ad40c08c03db1af6ede27c8", "4f2906993015c71123ec5e664a9b4b9a",
    "2f21fd9c81678e396751af8b2472e2bd",
))


PUBLIC_VALUE_LENGTHS = frozenset((16, 20, 24, 32, 39, 40, 88))
_AWS_EXAMPLE_KEY_ID = lazy_regex(r"^(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{9}EXAMPLE$")


def is_documented_public_value(value: str) -> bool:
    """A credential-shaped value that is public by design (emulator keys, documentation examples)."""
    text = value.strip().strip("'\"")
    if len(text) not in PUBLIC_VALUE_LENGTHS:
        return False
    if _AWS_EXAMPLE_KEY_ID.match(text):
        return True
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32] in PUBLIC_VALUE_HASHES


def is_reference(value: str) -> bool:
    """A pointer to a secret rather than the secret: ``SECRET:name,key``, ``vault:…``, ``@file``, ``${VAR}``."""
    text = value.strip().strip("'\"").strip()
    if text[:5].lower() == "pass:":  # openssl's ``-pass pass:"$seed"``: the value follows the prefix
        text = text[5:].strip("'\"")
    return bool(REFERENCE_PREFIXES.match(text)) or bool(_PLACEHOLDER_SHAPES.match(text) and text[:1] in "$<%{")


# an image pinned by digest (``gcr.io/knative-releases/…/proxy@sha256:<64 hex>``), as operators pass
# their helper images in env vars named ``AUTH_PROXY_IMAGE``: public, never a credential
_PINNED_IMAGE = lazy_regex(r"^[a-z0-9][a-z0-9._-]*(?:[:/][A-Za-z0-9._-]+)+@sha256:[0-9a-f]{64}$")


def is_not_a_credential_literal(value: str) -> bool:
    """Literals that cannot be a credential whatever their key: booleans, numbers, paths, plain URLs, password
    hashes (a hash is what a system stores instead of the password)."""
    text = value.strip().strip("'\"").strip()
    if _BOOLEAN_OR_NUMBER.match(text) or _PATH.match(text) or _PINNED_IMAGE.match(text) or _PASSWORD_HASH.match(text):
        return True
    return bool(_URL.match(text)) and "@" not in text


def looks_like_secret_name(value: str) -> bool:
    """``wandb-credentials``, ``hf_token_secret``: the *name* of a secret object, not its content."""
    return bool(_NAME_LIKE.match(value)) and bool(_SECRETISH_IN_NAME.search(value)) or bool(_SECRET_NAME_WORDS.match(value))


# --------------------------------------------------------------------------- shape and entropy

_HEX = lazy_regex(r"^[0-9a-fA-F]+$")
_UUID = lazy_regex(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_DIGEST = lazy_regex(r"^(?:sha256|sha512|sha1|md5|sha384):[0-9a-fA-F]{32,128}$", re.IGNORECASE)
_TOKEN_CHARS = lazy_regex(r"^[A-Za-z0-9+/=_.~:@!#%^&*?-]+$")


def shannon_entropy(text: str) -> float:
    if not text:
        return 0.0
    length = len(text)
    return -sum(count / length * math.log2(count / length) for count in Counter(text).values())


def is_public_value(value: str, key: KeyClass) -> bool:
    """Digests anywhere; hex/UUID values under checksum/revision/id-named keys."""
    text = value.strip()
    if _DIGEST.match(text):
        return True
    if key.secret:
        return False
    return key.public and (bool(_HEX.match(text)) or bool(_UUID.match(text)))


def looks_random(value: str, minimum_length: int = 16) -> bool:
    """A token-like literal: long enough, one word, mixed characters, high entropy."""
    if len(value) < minimum_length or not _TOKEN_CHARS.match(value):
        return False
    if _UUID.match(value):
        return True
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    if _HEX.match(value):
        return len(value) >= 32 and classes >= 2 and shannon_entropy(value) >= 3.0
    if classes < 2:
        return False
    return shannon_entropy(value) >= (3.0 if len(value) < 24 else 3.3)


_IDENTIFIER = lazy_regex(r"^[A-Za-z]+(?:[_.:-][A-Za-z]+)*(?:[_.-]\d{1,6})?$")
_CAMEL_PARTS = lazy_regex(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_QUALIFIED_NAME = lazy_regex(r"^[A-Za-z][A-Za-z0-9]{0,11}:([A-Za-z][A-Za-z0-9_]{15,})$")
_SNAKE_NAME = lazy_regex(r"^[a-z][a-z0-9]*(?:_[a-z0-9]{1,12}){2,}$")
_CONSTANT_NAME = lazy_regex(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_ALL_DIGITS = lazy_regex(r"^\d{6,64}$")
_LEET = str.maketrans("0134578@$", "oleastbas")


def looks_like_word_or_identifier(value: str) -> bool:
    """``Passord``, ``ERROR_PASSWORD_FETCH``, ``iamRoleStatements``, ``gcsCredentialFileName``:
    letters (in words, camelCase or joined by ``_``/``-``/``.``), at most a short number after."""
    if _IDENTIFIER.match(value):
        return True
    if _CONSTANT_NAME.match(value):  # ``R2_SECRET_ACCESS_KEY``: the name of a variable
        return sum(1 for part in value.split("_") if len(part) >= 3 and part.isalpha()) >= 2
    qualified = _QUALIFIED_NAME.match(value)  # ``clm08453852:AgencyIdentificationCodeContentType``: an XML type
    if qualified and (_IDENTIFIER.match(qualified.group(1)) or _camel_case_name(qualified.group(1))):
        return True
    if _SNAKE_NAME.match(value):  # ``s3_us_east_1_regional_endpoint``: a config key's name
        return sum(1 for part in value.split("_") if len(part) >= 4 and part.isalpha()) >= 2
    return _camel_case_name(value)


def _camel_case_name(value: str) -> bool:
    """``s3AccessKeyIDName``: three or more words of three letters or more make up most of it."""
    if not value.isalnum() or sum(character.isdigit() for character in value) > 2:
        return False
    words = [part for part in _CAMEL_PARTS.findall(value) if len(part) >= 3 and part.isalpha()]
    return len(words) >= 3 and sum(map(len, words)) >= 0.75 * len(value)


def is_leet_placeholder(value: str) -> bool:
    """``s3cret``, ``p4ssw0rd``, ``t0k3n``: a placeholder word in leetspeak."""
    lowered = value.lower()
    if lowered.isalpha() or not any(c.isalpha() for c in lowered):
        return False
    return is_placeholder(lowered.translate(_LEET))


def is_digit_password(value: str) -> bool:
    """An all-digit password (``DB_PASSWORD=83920147``): six digits or more, not ``123456…``/``000000``."""
    if not _ALL_DIGITS.match(value) or len(set(value)) <= 2 or _SEQUENTIAL_DIGITS.search(value):
        return False
    return not any(value[size:] == value[:-size] for size in range(1, len(value) // 2 + 1))  # ``12341234``


_BASE64 = lazy_regex(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


def is_encoded_placeholder(value: str) -> bool:
    """``cGFzc3dvcmQ=`` is ``password`` in base64 (a Kubernetes Secret's fixture): still a placeholder; so is a
    documented public value in base64."""
    if len(value) < 8 or len(value) > 200 or not _BASE64.match(value):
        return False
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    plain = decoded.strip()
    return plain.isprintable() and (is_placeholder(plain) or is_documented_public_value(plain))


# A UI locator: a CSS attribute selector (``input[type='password']``, ``[name=pwd]``) or an XPath
# (``//input[@name="password"]``); ``#password``/``.pw-field`` (an id or class of words) are checked apart.
_UI_SELECTOR = lazy_regex(r"""^(?:[A-Za-z*][\w-]*|[#.][A-Za-z][\w-]*)?\[\s*@?[A-Za-z][\w:-]*\s*[~|^$*]?=[^\]]*\]"""
                          r"""|^\(?\.?//(?:\*|[a-z][a-z0-9:-]*)(?:[\[/)]|$)""")
_ID_OR_CLASS_SELECTOR = lazy_regex(r"^[#.]([A-Za-z][\w-]*)$")
# ``os.Getenv(…)``, ``os.environ[…]``, ``getenv(…``: a call or subscript read from the environment or a
# config (cut at the quote in free text, or whole), an expression rather than a literal
_CODE_EXPRESSION = lazy_regex(r"^(?P<callee>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)[(\[](?:.*[)\]])?$")


# ``[parameters('adminPasswordOrKey')]``, ``[variables('x')]``: an ARM/Bicep template expression
_TEMPLATE_EXPRESSION = lazy_regex(r"^\[\s*[a-z][A-Za-z]*\(.*\)\s*\]$")
_DOTTED_NAME = lazy_regex(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}$")


def is_ui_selector(value: str) -> bool:
    """A CSS selector or XPath that locates a field of a form (``input[type='password']``,
    ``//input[@name="password"]``, ``#password``): what a UI test clicks, not a credential."""
    if _UI_SELECTOR.match(value):
        return True
    named = _ID_OR_CLASS_SELECTOR.match(value)
    return named is not None and looks_like_word_or_identifier(named.group(1))


def is_code_expression(value: str) -> bool:
    """``os.Getenv("DB_PASSWORD")``, ``os.environ["X"]``, ``config.get(…``: code that reads a value
    (written in a rule's message or example, in a snippet), not a literal secret.  The callee must
    be made of words: ``Xk9(pq)`` stays a password.  So are an Azure Resource Manager template
    expression (``[parameters('adminPassword')]``) and a dotted name of three or more words
    (``sc._jvm.org.vault.TokenLibrary``)."""
    if _TEMPLATE_EXPRESSION.match(value):
        return True
    if _DOTTED_NAME.match(value) and all(looks_like_word_or_identifier(part.lstrip("_")) for part in value.split(".")):
        return True
    match = _CODE_EXPRESSION.match(value)
    return match is not None and looks_like_word_or_identifier(match.group("callee").lstrip("_"))


def literal_secret_under_key(value: str, key: KeyClass, prose: bool = False) -> bool:
    """Would ``value`` written under a secret-named key be a credential?  (passwords: any real literal)

    ``prose``: the key and value were read out of free text, where ``password: required`` is a
    sentence; there a password must look like one (a digit, a capital, a symbol, or length).
    Words and identifiers are never credentials: a real password has more than letters.
    """
    text = value.strip().strip("'\"").strip()
    if not key.secret or not text or " " in text or "\t" in text or "\n" in text or is_documented_public_value(text):
        return False
    if key.password and is_digit_password(text):
        return True
    if is_placeholder(text) or is_reference(text) or is_not_a_credential_literal(text):
        return False
    if looks_like_word_or_identifier(text) or is_leet_placeholder(text) or is_documented_public_value(text):
        return False
    if is_encoded_placeholder(text) or is_ui_selector(text) or is_code_expression(text):
        return False
    if key.password:
        if prose and text.isalpha() and text.islower() and len(text) < 10:
            return False
        return len(text) >= 6 and not looks_like_secret_name(text)
    if "/" in text and any(mark in text for mark in "-_.:"):
        return False  # a path, URL or model id: base64 has '/' but never next to '-', '_', '.' or ':'
    if text.endswith(("...", "…")):
        return False  # an elided value (``ops_eyJzaWdu...``): what a document shows instead of the key
    if is_typed_fake(text) and not _HEX.match(text):
        # ``abcdefghijklmnopqrstuvwxyz123456``, ``1234567890:ABCDEF…``: a documentation fake.  Hex
        # counting up under a key stays reported: the shared corpus plants ``wandb.login(key=
        # "0123456789abcdef…")`` as the leak a notebook must be flagged for.
        return False
    return looks_random(text, _minimum_token_length(text)) and not looks_like_secret_name(text)


SHORT_TOKEN_LENGTH = 12  # with capitals in it
TOKEN_LENGTH = 20  # small letters and digits only: ``4x2akx7i0735cm95`` under ``token`` is an id or a fixture


def _minimum_token_length(text: str) -> int:
    """How long a random literal under a token-named key must be to count as a credential."""
    return SHORT_TOKEN_LENGTH if any(character.isupper() for character in text) else TOKEN_LENGTH
