"""Vendors' documented formats, values generated here: the shapes found in every carrier, and the
typed fakes documentation uses for them (letters and digits counting up, repeated units) not.

Every value is built at test time (random for the real shapes, counted up for the fakes), so
the repository holds no token-shaped literal."""

from __future__ import annotations

import base64
import json
import string

import pytest
from fakes import ALNUM
from fakes import Fakes

from spikelint.secrets.context import is_typed_fake
from spikelint.secrets.text import find_in_text

FAKE = Fakes(4242)
LOWER = string.ascii_lowercase
DIGITS = string.digits


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _counting(alphabet: str, length: int, start: int = 0) -> str:
    return "".join(alphabet[(start + index) % len(alphabet)] for index in range(length))


def _interleaved(length: int) -> str:
    """``abc123def456…``: three letters and three digits at a time, each counting up."""
    letters, digits = _counting(LOWER, length), _counting(DIGITS, length, 1)
    return "".join(letters[i:i + 3] + digits[i:i + 3] for i in range(0, length, 3))[:length]


SHAPES = {
    "unsigned JWT": lambda: _b64({"alg": "none", "typ": "JWT"}) + "." + _b64({"sub": FAKE.chars(ALNUM, 12)}) + ".",
    "signed JWT": FAKE.jwt,
    "Stripe prod key": lambda: "sk_" + "prod_" + FAKE.chars(ALNUM, 24),
    "Stripe short restricted key": lambda: "rk_" + "test_" + FAKE.chars(ALNUM, 16),
    "Stripe webhook secret": lambda: "whsec_" + FAKE.chars(ALNUM, 32),
    "Stripe live key": FAKE.stripe,
    "GitLab session cookie": lambda: "_gitlab_session=" + FAKE.chars(DIGITS + LOWER, 32),
    "Slack legacy bot token": lambda: "xoxb-" + FAKE.chars(DIGITS, 12) + "-" + FAKE.chars(ALNUM, 24),
    "Slack legacy workspace token": lambda: "xoxa-" + "-".join(FAKE.chars(DIGITS, 11) for _ in range(3)) + "-" +
    FAKE.chars("0123456789abcdef", 32),
    "Hugging Face token": lambda: "hf_" + FAKE.chars(string.ascii_letters, 34),
    "Hugging Face organization token": lambda: "api_org_" + FAKE.chars(string.ascii_letters, 34),
}
CARRIERS = ("{value}", "export X='{value}'\n", "note: {value}\n", '{{"k": "{value}"}}', "curl -H 'Cookie: {value}' x")


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_each_documented_shape_is_found_in_every_carrier(kind: str) -> None:
    value = SHAPES[kind]()
    for carrier in CARRIERS:
        text = carrier.format(value=value)
        found = find_in_text(text)
        assert any(secret.value in value or value in secret.value for secret in found), (kind, carrier)


TYPED_FAKES = {
    "Slack, repeated parts": "xoxb-" + "1" * 12 + "-" + "2" * 13 + "-" + "abc123" * 4,
    "Stripe, counting up": "sk_" + "live_" + _interleaved(27),
    "Stripe, the alphabet then digits": "sk_" + "test_" + LOWER + _counting(DIGITS, 10, 1),
    "Anthropic, a repeated unit and the vendor tail": "sk-ant-" + "api03-" + "abc123" * 15 + "abAA",
    "Telegram, counting up": "bot_token = '" + _counting(DIGITS, 9, 1) + ":" + "ABCdefGHIjklMNOpqrSTUvwxYZ" +
    _counting(DIGITS, 9, 1) + "'",
    "Telegram under a key": "TELEGRAM_BOT_TOKEN=" + _counting(DIGITS, 10, 1) + ":" + string.ascii_uppercase +
    LOWER[:9],
    "keyed alphabet": "api_key = '" + LOWER + _counting(DIGITS, 6, 1) + "'",
    "GitHub, the alphabet": "ghp_" + LOWER + _counting(DIGITS, 10),
}
KEYWORD_WITHOUT_CREDENTIAL = (
    "password = 'password'", "password: changeme", "secret_key = 'my-secret-key'", "api_key: ${API_KEY}",
    "token = os.environ['TOKEN']", "auth_token: 'Bearer abc123'", "key = 'sk_live_' + generate()",
    "secret: '" + "x" * 32 + "'",
)


@pytest.mark.parametrize("name", sorted(TYPED_FAKES))
def test_typed_fakes_of_the_shapes_are_not_reported(name: str) -> None:
    assert find_in_text(TYPED_FAKES[name]) == []


@pytest.mark.parametrize("text", KEYWORD_WITHOUT_CREDENTIAL)
def test_a_keyword_without_a_credential_shaped_literal_is_not_reported(text: str) -> None:
    assert find_in_text(text) == []


def test_random_values_of_the_same_shapes_are_still_reported() -> None:
    """The near-miss the other way: the fakes' shapes with random bodies."""
    real = ["xoxb-" + FAKE.chars(DIGITS, 12) + "-" + FAKE.chars(DIGITS, 13) + "-" + FAKE.chars(ALNUM, 24),
            "sk_" + "live_" + FAKE.chars(ALNUM, 27), "sk-ant-" + "api03-" + FAKE.chars(ALNUM, 93) + "AA",
            "api_key = '" + FAKE.chars(ALNUM, 32) + "'", "ghp_" + FAKE.chars(ALNUM, 36)]
    for text in real:
        assert find_in_text(text), text[:12]


def test_a_typed_fake_is_typed_nearly_throughout() -> None:
    assert is_typed_fake(_counting(DIGITS, 10, 1) + ":" + string.ascii_uppercase)
    assert is_typed_fake("abc123" * 5)
    assert is_typed_fake("abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnop" + "by56aaaog")
    assert not is_typed_fake(_counting(DIGITS, 10, 1) + ":" + FAKE.chars(ALNUM, 26))  # one random part: real
    assert not is_typed_fake(FAKE.chars(ALNUM, 40))
    assert not is_typed_fake("abc")  # too short to say


def test_no_random_value_is_taken_for_a_typed_fake() -> None:
    """Over many random bodies of token lengths, none counts up or repeats (the rule costs no recall)."""
    assert not [body for body in (FAKE.chars(ALNUM, length) for length in (16, 24, 32, 36, 40, 64) for _ in range(300))
                if is_typed_fake(body)]


CURL_CREDENTIALS = (
    "curl -s -v --user \"j.smith:{password}\" \"https://api.example.org/user/me\"",  # '@' and '#' in the password
    "curl -u \":{password}\" https://localhost:9200",  # no user name
    "curl --user kevin:'{password}' -iX PATCH -d x https://api.example.org",  # the password quoted alone
    "curl -H \"Authorization: Api-Token {token}\" https://api.example.org",
    "curl -L -H \"Authorization: {openshift}\" https://oauth.example.org",  # an OpenShift token, no scheme
)


@pytest.mark.parametrize("template", CURL_CREDENTIALS)
def test_curl_credentials_in_their_documented_spellings(template: str) -> None:
    password = FAKE.chars(ALNUM, 6) + "@" + FAKE.chars(ALNUM, 5) + "#" + FAKE.chars(DIGITS, 2)
    token = FAKE.chars(ALNUM + "-_", 43)
    openshift = "sha256~" + token
    text = template.format(password=password, token=token, openshift=openshift)
    expected = password if "{password}" in template else openshift if "{openshift}" in template else token
    assert [secret.value for secret in find_in_text(text)] == [expected]


@pytest.mark.parametrize("text", ["curl -i -u 'test:test' https://x", "curl -u \"$1:$2\" https://x",
                                  "curl -u <user:password> https://x", "curl -u ':' https://x",
                                  "curl -u \"${username}:${password}\" https://x"])
def test_curl_placeholders_stay_quiet(text: str) -> None:
    assert find_in_text(text) == []


# --------------------------------------------------------------------------- shapes and carriers added
# for the peer's rule samples: a JWT whose encoder used the standard alphabet, Mailgun's public and
# signing keys, Amazon Bedrock keys, Slack legacy tokens and ids typed by hand, long Vault batch tokens.

B64 = string.ascii_letters + string.digits


def _standard_alphabet_jwt() -> str:
    return "ey" + FAKE.chars(B64, 22) + ".ey" + FAKE.chars(B64 + "/", 30) + "." + FAKE.chars(B64 + "_-", 22)


MORE_SHAPES = {
    "JWT in the standard base64 alphabet": _standard_alphabet_jwt,
    "Mailgun public key": lambda: "pubkey-" + FAKE.chars("0123456789abcdef", 32),
    "Amazon Bedrock long-lived key": lambda: "ABSK" + "QmVkcm9ja0FQSUtleS1" + FAKE.chars(B64, 108) + "=",
    "Amazon Bedrock short-lived key": lambda: "bedrock-api-key-" + "YmVkcm9jay5hbWF6b25hd3MuY29t" + FAKE.chars(B64, 60),
    "Slack legacy token": lambda: "xoxo-" + "-".join(FAKE.chars(DIGITS, 6) for _ in range(3)) + "-" +
    FAKE.chars("0123456789abcdef", 18),
    "Slack bot token with a typed team id": lambda: "xoxb-" + _counting(DIGITS, 12, 1) + "-" + FAKE.chars(B64, 19),
    "Hugging Face token whose random part starts with HF": lambda: "hf_" + "HF" + FAKE.chars(string.ascii_letters, 32),
    "Vault batch token": lambda: "hvb." + FAKE.chars(B64 + "_-", 220),
}


@pytest.mark.parametrize("kind", sorted(MORE_SHAPES))
def test_more_documented_shapes_are_found_in_every_carrier(kind: str) -> None:
    value = MORE_SHAPES[kind]()
    for carrier in CARRIERS:
        found = find_in_text(carrier.format(value=value))
        assert any(secret.value in value or value in secret.value for secret in found), (kind, carrier)


def test_the_mailgun_signing_key_is_found_where_the_text_names_mailgun() -> None:
    key = FAKE.chars("0123456789abcdef", 32) + "-" + FAKE.chars("0123456789abcdef", 8) + "-" + \
        FAKE.chars("0123456789abcdef", 8)
    assert [secret.type for secret in find_in_text("# mailgun webhooks\nsigning = " + key)] == ["Mailgun signing key"]
    assert find_in_text("checksum " + key) == []  # the bare shape is a hash list's row elsewhere


KEYED_CARRIERS = (
    'var apiToken string = "{value}"',  # Go, a type between the name and the value
    "val apiToken: String = \"{value}\"",  # Kotlin
    "apiToken := `{value}`",  # Go backticks
    "<apiToken>\n    {value}\n</apiToken>",  # XML, the value on a line of its own
    '{{"config.ini": "API_TOKEN={value}\\nBACKUP_ENABLED=true"}}',  # an escaped newline inside a JSON string
    'API_TOKEN ::= "{value}"', 'API_TOKEN :::= "{value}"', 'API_TOKEN ?= "{value}"',  # make
    '$apiToken .= "{value}"',  # PHP
    'System.setProperty("API_TOKEN", "{value}")',
)


@pytest.mark.parametrize("carrier", KEYED_CARRIERS)
def test_a_keyed_random_value_is_found_in_each_language_spelling(carrier: str) -> None:
    value = FAKE.chars(B64, 32)
    assert [secret.value for secret in find_in_text(carrier.format(value=value))] == [value]


@pytest.mark.parametrize("carrier", KEYED_CARRIERS)
def test_a_keyed_placeholder_stays_quiet_in_each_language_spelling(carrier: str) -> None:
    assert find_in_text(carrier.format(value="<your-api-token>")) == []
    assert find_in_text(carrier.format(value="${API_TOKEN}")) == []


def test_short_lowercase_ids_under_a_token_key_are_not_credentials() -> None:
    """``nonMatchingToken := "4x2akx7i0735cm95"``: small letters and digits, short of a key's length."""
    assert find_in_text('testToken := "' + FAKE.chars(LOWER + DIGITS, 16) + '"') == []
    assert find_in_text('testToken := "sm_pat_' + FAKE.chars(LOWER + DIGITS, 10) + '"') == []
    long_one = FAKE.chars(LOWER + DIGITS, 24)
    assert [secret.value for secret in find_in_text('testToken := "' + long_one + '"')] == [long_one]
    mixed = FAKE.chars(LOWER, 6) + FAKE.chars(string.ascii_uppercase, 5) + FAKE.chars(DIGITS, 5)
    assert [secret.value for secret in find_in_text('testToken := "' + mixed + '"')] == [mixed]


def test_an_elided_value_is_what_a_document_shows_instead_of_the_key() -> None:
    assert find_in_text("export OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ" + FAKE.chars(B64, 30) + "...") == []
    assert find_in_text("api_token: " + FAKE.chars(B64, 30) + "…") == []


def test_random_google_api_keys_stay_reported_beside_the_documented_examples() -> None:
    """The documented examples are known by hash only; any other key of that shape is a leak."""
    from spikelint.secrets.context import PUBLIC_VALUE_HASHES

    assert all(len(digest) == 32 and set(digest) <= set("0123456789abcdef") for digest in PUBLIC_VALUE_HASHES)
    for _ in range(20):
        key = "AIza" + FAKE.chars(B64 + "_-", 35)
        assert [secret.type for secret in find_in_text(key)] == ["Google API key"]
