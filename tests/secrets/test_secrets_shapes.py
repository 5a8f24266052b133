"""Every token shape SPK201 names, in neutral carriers (``notes: <token>``, plain text, code),
generated at test time from the vendors' documented formats; and the near-misses real
repositories hold (placeholders, padded prefixes, public values) that must stay quiet."""

from __future__ import annotations

import string
from typing import Callable

import pytest
from fakes import ALNUM
from fakes import HEX
from fakes import Fakes

from spikelint.engine import lint_snippet
from spikelint.secrets.detectors import token_secrets

F = Fakes(seed=9)
LOWER_ALNUM = string.ascii_lowercase + string.digits

SHAPES: dict[str, Callable[[], str]] = {
    "hugging face user": F.hf,
    "hugging face org": lambda: "api_org_" + F.chars(ALNUM, 34),
    "github classic": F.github,
    "github oauth": lambda: "gho_" + F.chars(ALNUM, 36),
    "github user-to-server": lambda: "ghu_" + F.chars(ALNUM, 36),
    "github server-to-server": lambda: "ghs_" + F.chars(ALNUM, 36),
    "github refresh": lambda: "ghr_" + F.chars(ALNUM, 36),
    "github fine-grained": F.github_fine_grained,
    "gitlab pat": F.gitlab,
    "gitlab feature flag client": lambda: "glffct-" + F.chars(ALNUM, 20),
    "gitlab deploy": lambda: "gldt-" + F.chars(ALNUM, 20),
    "gitlab runner auth": lambda: "glrt-" + F.chars(ALNUM, 20),
    "gitlab ci build": lambda: "glcbt-" + F.chars(HEX, 2) + "_" + F.chars(ALNUM, 20),
    "gitlab trigger": lambda: "glptt-" + F.chars(HEX, 40),
    "gitlab feed": lambda: "glft-" + F.chars(ALNUM, 20),
    "gitlab incoming mail": lambda: "glimt-" + F.chars(LOWER_ALNUM, 25),
    "gitlab agent": lambda: "glagent-" + F.chars(ALNUM, 50),
    "gitlab scim": lambda: "glsoat-" + F.chars(ALNUM, 20),
    "gitlab runner registration": lambda: "GR1348941" + F.chars(ALNUM, 20),
    "slack bot": F.slack,
    "slack user": lambda: "xoxp-" + F.chars(string.digits, 12) + "-" + F.chars(string.digits, 12) + "-" +
    F.chars(string.digits, 13) + "-" + F.chars(HEX, 32),
    "slack app": lambda: "xapp-1-A" + F.chars(string.ascii_uppercase + string.digits, 10) + "-" +
    F.chars(string.digits, 13) + "-" + F.chars(HEX, 64),
    "slack webhook https": lambda: "https://hooks.slack.com/services/T" + F.chars("ABCDEFGH0123456789", 8) + "/B" +
    F.chars("ABCDEFGH0123456789", 8) + "/" + F.chars(ALNUM, 24),
    "slack webhook http": lambda: "http://hooks.slack.com/services/T" + F.chars("ABCDEFGH0123456789", 8) + "/B" +
    F.chars("ABCDEFGH0123456789", 8) + "/" + F.chars(ALNUM, 24),
    "slack webhook without scheme": lambda: "hooks.slack.com/services/T" + F.chars("ABCDEFGH0123456789", 8) + "/B" +
    F.chars("ABCDEFGH0123456789", 8) + "/" + F.chars(ALNUM, 24),
    "stripe live": F.stripe,
    "stripe test": lambda: "sk_" + "test_" + F.chars(ALNUM, 24),
    "stripe restricted": lambda: "rk_" + "live_" + F.chars(ALNUM, 24),
    "azure ad client secret": lambda: F.chars(ALNUM, 3) + F.chars(string.digits, 1) + "Q~" + F.chars(ALNUM + "_~.-", 34),
    "nvidia": F.nvidia,
    "docker hub": lambda: "dckr_pat_" + F.chars(ALNUM + "-_", 27),
    "npm": lambda: "npm_" + F.chars(ALNUM, 36),
    "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + F.chars(ALNUM + "-_", 80),
    "databricks": lambda: "dapi" + F.chars(HEX, 32),
    "replicate": lambda: "r8_" + F.chars(ALNUM, 37),
    "langsmith personal": lambda: "lsv2_pt_" + F.chars(HEX, 32) + "_" + F.chars(HEX, 10),
    "langsmith service": lambda: "lsv2_sk_" + F.chars(HEX, 32) + "_" + F.chars(HEX, 10),
    "wandb v1": lambda: "wandb_v1_" + F.chars(ALNUM, 27) + "_" + F.chars(ALNUM, 49),
    "openai project": F.openai,
    "openai legacy": lambda: "sk-" + F.chars(ALNUM, 20) + "T3BlbkFJ" + F.chars(ALNUM, 20),
    "anthropic": F.anthropic,
    "aws key id": F.aws_key_id,
    "google api key": F.google_api_key,
    "google oauth client secret": lambda: "GOCSPX-" + F.chars(ALNUM + "-_", 28),
    "jwt": F.jwt,
    "mailgun": lambda: "key-" + F.chars(HEX, 32),
    "sendinblue": lambda: "xkeysib-" + F.chars(HEX, 64) + "-" + F.chars(ALNUM, 16),
    "defined networking": lambda: "dnkey-" + F.chars(LOWER_ALNUM, 26) + "-" + F.chars(LOWER_ALNUM, 52),
    "groq": lambda: "gsk_" + F.chars(ALNUM, 52),
    "vault": lambda: "hvs." + F.chars(ALNUM + "_-", 91),
}
CARRIERS: dict[str, tuple[str, str, str, str]] = {  # file name, head, line around {token}, tail
    "neutral yaml key": ("config.yaml", "", "notes{n}: {token}\n", ""),
    "plain text": ("NOTES.md", "# Notes\n", "The service answered with {token} yesterday.\n", ""),
    "neutral json key": ("settings.json", "{{\n", '  "notes{n}": "{token}",\n', '  "end": 1\n}}\n'),
    "python": ("client.py", "", 'value{n} = "{token}"\n', ""),
    "go": ("client.go", "package x\n\n", 'var v{n} = "{token}"\n', ""),
    "shell comment": ("run.sh", "#!/bin/bash\n", "# {token}\n", "echo ok\n"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_token_shapes_are_recognised(shape: str) -> None:
    token = SHAPES[shape]()
    found = token_secrets(f"notes: {token}")
    assert len(found) == 1 and token.endswith(found[0].value), (shape, found)


@pytest.mark.parametrize("carrier", sorted(CARRIERS))
def test_token_shapes_fire_in_any_carrier(carrier: str) -> None:
    name, head, template, tail = CARRIERS[carrier]
    tokens = {shape: make() for shape, make in sorted(SHAPES.items())}
    first = head.count("\n") + 1
    body = "".join(template.format(n=n, token=token) for n, token in enumerate(tokens.values()))
    findings = lint_snippet(name, head.format() + body + tail.format(), {"select": ["SPK201"]})
    lines = [finding.line for finding in findings]
    for n, (shape, token) in enumerate(tokens.items()):
        assert lines.count(first + n) == 1, (shape, carrier)
    assert len(findings) == len(tokens)
    assert not any(token in finding.message for finding in findings for token in tokens.values())


def test_cohere_keys_are_known_by_their_name() -> None:
    key = F.chars(ALNUM, 40)
    assert [secret.type for secret in token_secrets(f"COHERE_API_KEY={key}")] == ["Cohere API key"]
    assert [secret.type for secret in token_secrets(f'cohere.Client("{key}")'.replace("(", ": ", 1))] == \
        ["Cohere API key"]
    assert token_secrets(f"checksum: {key}") == []


@pytest.mark.parametrize("value", [
    "ghp_" + "x" * 36, "glpat-" + "X" * 20, "hvs." + "x" * 91, "xoxb-xoxb-my-bot-token", "nvapi-REDACTED",
    "hf_" + "abcdefghijklmnopqrstuvwxyz01234567", "sk_" + "test_" + "1234567890abcdefghijklmn",
    "AKIA" + "IOSFODNN7" + "EXAMPLE", "AKIA" + "I44QH8DHB" + "EXAMPLE",
    "glpat-" + "ab12" * 6, "ghp_" + "0123456789" * 3 + "abcdef",
    "https://hooks.slack.com/services/T" + "0" * 8 + "/B" + "0" * 8 + "/" + "X" * 24,
    "https://hooks.slack.com/services/T" + "1A2B3C4D/B9Z8Y7/Q1w2E3r4" + "T5y6U7i8o",  # too short to be real
])
def test_padded_prefixes_sequential_fakes_and_documented_examples_stay_quiet(value: str) -> None:
    assert token_secrets(value) == []
    assert lint_snippet("config.yaml", f"notes: {value}\n", {"select": ["SPK2"]}) == []


def test_azurite_emulator_key_is_public() -> None:
    azurite = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="  # pragma: allowlist secret
    text = f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" \
           f"AccountKey={azurite};BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1\n"
    assert lint_snippet(".env", text, {"select": ["SPK2"]}) == []
    real = F.chars(ALNUM + "+/", 86) + "=="
    assert len(lint_snippet(".env", text.replace(azurite, real), {"select": ["SPK2"]})) == 1


def test_x_oauth_basic_is_one_finding_for_one_url() -> None:
    token = F.github()
    text = f"git clone https://{token}:x-oauth-basic@github.com/org/repo.git\n"
    findings = lint_snippet("NOTES.txt", text, {"select": ["SPK2"]})
    assert [(finding.line, finding.rule) for finding in findings] == [(1, "SPK201")]
    assert "GitHub" in findings[0].message


def test_a_git_sha_under_a_cohere_named_key_is_not_a_key() -> None:
    sha = F.chars(HEX, 40)
    assert token_secrets(f'cohere_revision = "{sha}"') == []


def test_telegram_bot_tokens_are_found_through_detect_secrets() -> None:
    token = F.chars(string.digits, 9) + ":" + F.chars(ALNUM + "-_", 35)
    findings = lint_snippet("notes.md", f"bot: {token}\n")
    assert [(f.rule, f.line) for f in findings] == [("SPK201", 1)]


def test_an_image_digest_does_not_wake_detect_secrets() -> None:
    """``@sha256:<hex>`` once matched the Telegram prefilter: every pinned image imported detect-secrets."""
    from spikelint.secrets.detectors import DETECT_SECRETS_PREFILTER

    image = "registry.example.com/team/train@sha256:" + F.chars(HEX, 64)
    assert DETECT_SECRETS_PREFILTER.search(f"image: {image}") is None
    assert lint_snippet("notes.md", f"image: {image}\n") == []
