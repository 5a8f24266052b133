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
