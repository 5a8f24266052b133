"""The detectors and their context gating, one value at a time (no files, no engine)."""

from __future__ import annotations

import pytest
from fakes import Fakes

from spikelint.secrets.context import classify_key
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_secret_env_name
from spikelint.secrets.detectors import find_secrets
from spikelint.secrets.redact import redact
from spikelint.secrets.redact import secret_key
from spikelint.secrets.detectors import token_secrets
from spikelint.secrets.text import find_in_text

FAKE = Fakes()
SHAPED = {
    "Hugging Face token": FAKE.hf(),
    "GitHub token": FAKE.github(),
    "OpenAI API key": FAKE.openai(),
    "Anthropic API key": FAKE.anthropic(),
    "NVIDIA API key": FAKE.nvidia(),
    "AWS access key ID": FAKE.aws_key_id(),
    "Google API key": FAKE.google_api_key(),
    "Slack token": FAKE.slack(),
    "Stripe key": FAKE.stripe(),
    "JSON Web Token": FAKE.jwt(),
    "GitLab token": FAKE.gitlab(),
}


@pytest.mark.parametrize("type_", sorted(SHAPED))
def test_token_shapes_are_found_without_any_key(type_: str) -> None:
    value = SHAPED[type_]
    found = find_secrets(f"prefix {value} suffix")
    assert [(secret.value, secret.type) for secret in found] == [(value, type_)]


def test_fine_grained_github_token() -> None:
    value = FAKE.github_fine_grained()
    assert [secret.type for secret in find_secrets(value)] == ["GitHub token"]


@pytest.mark.parametrize("type_", ["Hugging Face token", "GitHub token", "NVIDIA API key"])
def test_token_boundaries_hold_next_to_underscores_and_dashes(type_: str) -> None:
    value = SHAPED[type_]
    assert find_secrets(f"x_{value}") == []  # glued to a longer word: not this token
    assert find_secrets(f"{value}x") == []
    assert [secret.value for secret in find_secrets(f"={value};")] == [value]


def test_private_key_block_needs_key_material() -> None:
    block = FAKE.private_key()
    found = find_secrets(block)
    assert len(found) == 1 and found[0].type == "private key"
    assert find_secrets('if line.startswith("-----BEGIN ' + 'PRIVATE KEY-----"):') == []


def test_private_key_in_a_json_string_with_escaped_newlines() -> None:
    escaped = FAKE.private_key().replace("\n", "\\n")
    assert [secret.type for secret in find_secrets(escaped)] == ["private key"]


def test_url_credentials() -> None:
    password = FAKE.password()
    found = find_secrets(f"https://mlbot:{password}@git.example.org/ml/tools.git")
    assert [(secret.value, secret.type) for secret in found] == [(password, "password in URL")]
    token = FAKE.high_entropy(40)
    assert [secret.value for secret in find_secrets(f"https://{token}@github.com/acme/x.git")] == [token]


@pytest.mark.parametrize("url", [
    "https://${GITHUB_TOKEN}@github.com/acme/x.git",
    "https://user:$(cat /run/secrets/pw)@example.org",
    "https://user:<password>@example.org",
    "https://git@github.com/acme/x.git",
    "postgres://app:changeme@db:5432/app",
    "https://user:****@example.org",
])
def test_url_placeholders_and_plain_users_are_not_credentials(url: str) -> None:
    assert find_secrets(url) == []


# --------------------------------------------------------------------------- keys


@pytest.mark.parametrize("key", ["api_key", "apiKey", "HF_TOKEN", "hub_token", "password", "db-password",
                                 "WANDB_API_KEY", "client_secret", "secretKey", "aws_secret_access_key",
                                 "Authorization", "hftoken", "private_key", "access_token"])
def test_secret_named_keys(key: str) -> None:
    assert classify_key(key).secret


@pytest.mark.parametrize("key", ["secret_name", "secretName", "existingSecret", "secretKeyRef", "token_file",
                                 "max_tokens", "pad_token_id", "tokenizer_name", "password_file", "api_key_env",
                                 "use_auth_token", "auth_url", "imagePullSecrets", "num_tokens", "revision", "key",
                                 "AWS_ACCESS_KEY_ID", "git_author_name", "password_selectors", "passwordLocator",
                                 "token_locators", "password_xpath"])
def test_keys_that_name_or_locate_a_secret_are_not_secret_named(key: str) -> None:
    assert not classify_key(key).secret


def test_a_secret_named_key_wins_over_the_value_shape() -> None:
    sha = FAKE.wandb()
    assert [secret.type for secret in find_secrets(sha, "api_key")] == ["API key"]
    assert [secret.type for secret in find_secrets(sha, "WANDB_API_KEY")] == ["Weights & Biases API key"]
    assert find_secrets(sha, "revision") == []
    assert find_secrets(sha, "commit") == []
    assert find_secrets(sha) == []


@pytest.mark.parametrize("key,value", [
    ("client_id", "0b4c1e22-7d2f-4b8e-9a51-3c6f0e8d2a11"),
    ("checksum", "d41d8cd98f00b204e9800998ecf8427e"),
    ("image_digest", "sha256:" + "ab" * 32),
    ("api_key", "sha256:" + "ab" * 32),
    ("model_revision", "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"),
])
def test_public_values(key: str, value: str) -> None:
    assert find_secrets(value, key) == []


def test_passwords_count_even_when_short_and_low_entropy() -> None:
    assert [secret.type for secret in find_secrets("hunter2", "DB_PASSWORD")] == ["password"]
    assert find_secrets("hunter2", "api_key") == []  # tokens must look random


@pytest.mark.parametrize("value", ["<token>", "${TOKEN}", "${oc.env:HF_TOKEN}", "$(HF_TOKEN)", "$HF_TOKEN",
                                   "{{ .Values.token }}", "changeme", "xxxx", "XXXXXXXXXXXXXXXX", "***", "dummy",
                                   "", "your-api-key-here", "YOUR_HF_TOKEN", "<your token>", "REPLACE_ME",
                                   "%(token)s", "{token}", "[REDACTED]", "example-secret", "none", "null"])
def test_placeholders(value: str) -> None:
    assert is_placeholder(value)
    assert find_secrets(value, "api_key") == []
    assert find_secrets(value, "password") == []


@pytest.mark.parametrize("value", ["SECRET:wandb-credentials,api-key", "vault:secret/data/ml#token",
                                   "arn:aws:secretsmanager:eu-west-1:123456789012:secret:hf", "@/run/secrets/token",
                                   "wandb-credentials", "hf-token-secret"])
def test_references_and_secret_names(value: str) -> None:
    assert find_secrets(value, "api_key") == []
    assert find_secrets(value, "password") == []


def test_shaped_placeholders_with_a_real_prefix() -> None:
    assert find_secrets("hf_" + "x" * 34) == []
    assert find_secrets("ghp_" + "0" * 36) == []
    assert find_secrets("AKIA" + "X" * 16) == []


def test_documented_aws_example_keys_are_public() -> None:
    assert find_secrets("AKIA" + "IOSFODNN7" + "EXAMPLE") == []
    assert find_secrets("wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY", "aws_secret_access_key") == []


def test_values_that_cannot_be_credentials() -> None:
    for value in ("true", "8080", "/run/secrets/hf/token", "https://auth.example.org/token", "0.5"):
        assert find_secrets(value, "token") == []


@pytest.mark.parametrize("value", ["input[type='password']", "input[name=pass_word]", "[data-test=pw]",
                                   '//input[@name="password"]', "(//form//input)[2]", "#password", ".pw-field",
                                   'os.Getenv("DB_PASSWORD")', "os.environ['DB_PASSWORD']", "getenv(",
                                   "settings.get_secret(\"db\")"])
def test_ui_locators_and_code_expressions_are_not_credentials(value: str) -> None:
    assert find_secrets(value, "password") == []
    assert find_secrets(value, "api_token") == []


@pytest.mark.parametrize("value", ["#Xk9q2Lm7", "Xk9(q2Lm)", "q8[Zr3]vKp", ".Zr3vKp9x", "(//Zr3vKp9"])
def test_passwords_that_only_start_like_a_locator_or_a_call_are_still_passwords(value: str) -> None:
    assert [secret.type for secret in find_secrets(value, "password")] == ["password"]


# --------------------------------------------------------------------------- env names (SPK202)


@pytest.mark.parametrize("name", ["HF_TOKEN", "WANDB_API_KEY", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "GITHUB_PAT_TOKEN",
                                  "OPENAI_APIKEY", "REGISTRY_PASSWD", "GCP_CREDENTIALS", "BASIC_AUTH", "PRIVATE_KEY"])
def test_secret_env_names(name: str) -> None:
    assert is_secret_env_name(name)


@pytest.mark.parametrize("name", ["TOKENIZERS_PARALLELISM", "MAX_TOKENS", "HF_TOKEN_LIMIT", "AUTH_URL", "GIT_AUTHOR_NAME",
                                  "MAX_NEW_TOKENS", "HF_HUB_DISABLE_IMPLICIT_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS",
                                  "SECRET_NAME", "HF_TOKEN_PATH", "NCCL_DEBUG", "WANDB_PROJECT", "OAUTH_CLIENT_ID",
                                  "BASIC_AUTH_USER", "AUTH_ISSUER", "AZURE_TENANT_ID", "AUTH_TIMEOUT"])
def test_non_secret_env_names(name: str) -> None:
    assert not is_secret_env_name(name)


# --------------------------------------------------------------------------- free text


def test_text_assignments_give_the_key() -> None:
    password = FAKE.password()
    text = f"# db settings\nDB_PASSWORD={password}\nexport AWS_SECRET_ACCESS_KEY='{FAKE.aws_secret()}'\nMODE=fast\n"
    found = find_in_text(text)
    assert [secret.type for secret in found] == ["password", "AWS secret access key"]


def test_text_auth_headers_and_wandb_login() -> None:
    bearer = FAKE.high_entropy(40)
    key = FAKE.wandb()
    found = find_in_text(f'curl -H "Authorization: Bearer {bearer}" https://x\nwandb login {key}\n')
    assert [secret.value for secret in found] == [bearer, key]


def test_bare_hex_in_text_is_not_a_wandb_key() -> None:
    sha = FAKE.wandb()
    assert find_in_text(f"commit {sha}\nrevision: {sha}\n") == []


# --------------------------------------------------------------------------- redaction


def test_redaction_shows_four_characters_and_the_type() -> None:
    token = FAKE.hf()
    assert redact(token, "Hugging Face token") == token[:4] + "… (Hugging Face token)"
    assert redact("hunter2", "password") == "h… (password)"
    assert redact("abc", "password") == "… (password)"


def test_secret_key_is_a_hash_not_the_secret() -> None:
    token = FAKE.hf()
    key = secret_key(token)
    assert token not in key and key.startswith("sha256:") and key == secret_key(token)


def test_detect_secrets_plugins_are_used_for_other_vendors() -> None:
    sendgrid = "SG." + FAKE.chars("abcdefghijABCDEFGHIJ0123456789", 22) + "." + FAKE.high_entropy(43)
    assert [secret.type for secret in token_secrets(sendgrid)] == ["SendGrid API Key"]
