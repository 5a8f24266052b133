"""Typed tokens hidden by base64 (standard, URL-safe), hex or percent-encoding, nested: SPK201 at the encoded
value, saying how it was encoded, four characters of the token at most; and what must not be decoded into a
finding (images, digests, words, a Secret's data its own reader reports)."""

from __future__ import annotations

import base64
import time
from urllib.parse import quote

import pytest

from spikelint.engine import lint_snippet
from spikelint.secrets.encoded import encoded_secrets

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"
HF = "hf_" + "Qw7eR5tY3uI1oP9aS8dF6gH4jK2lZ0xC7v"


def spk201(filename: str, text: str) -> list[tuple[int, int, str]]:
    return [(f.line, f.column, f.message) for f in lint_snippet(filename, text, {"select": ["SPK2"]})]


@pytest.mark.parametrize(("how", "encoded"), [
    ("base64-encoded", base64.b64encode(f"TOKEN={TOKEN}\n".encode()).decode()),
    ("base64-encoded", base64.urlsafe_b64encode(f"{{\"token\": \"{TOKEN}\"}}".encode()).decode().rstrip("=")),
    ("hex-encoded", TOKEN.encode().hex()),
    ("base64-encoded, inside base64-encoded",
     base64.b64encode(base64.b64encode(f"token: {TOKEN}".encode())).decode()),
])
def test_an_encoded_token_is_found_at_the_encoded_value(how: str, encoded: str) -> None:
    found = spk201("configmap.yaml", f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  blob: {encoded}\n")
    assert found == [(6, 9, f"hardcoded ghp_… (GitHub token, {how}) — rotate it and load it from a secret store or "
                            "an environment variable injected from a secret")]
    assert TOKEN[:8] not in found[0][2]


def test_a_percent_encoded_token_in_a_url(tmp_path: object) -> None:
    url = "https://hub.example.org/login?next=" + quote(f"/cb?token={HF}&x=1", safe="")
    hits = encoded_secrets(f"url: {url.replace('_', '%5F')}\n")
    assert [(hit.secret.type, hit.how) for hit in hits] == [("Hugging Face token", "percent-encoded")]


def test_a_high_entropy_finding_of_the_encoded_value_gives_way_to_the_token_it_holds() -> None:
    found = spk201(".env", f"CREDS={TOKEN.encode().hex()}\n")
    assert [message.split(" — ")[0] for _, _, message in found] == ["hardcoded ghp_… (GitHub token, hex-encoded)"]


@pytest.mark.parametrize(("filename", "text"), [
    # a notebook's image output, a digest, a commit, a word-like identifier, base64 of plain text with no token
    ("image.json", '{"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}\n'),
    ("job.yaml", "image: harbor.example.org/x@sha256:3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5f7a9b1d3f5e7a9c1b3d\n"),
    ("a.env", "REVISION=3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a\n"),
    ("b.yaml", "name: VeryLongCamelCaseIdentifierForTheTrainer\n"),
    ("c.yaml", f"note: {base64.b64encode(b'hello world, nothing secret here at all').decode()}\n"),
])
def test_what_decodes_to_no_token_stays_quiet(filename: str, text: str) -> None:
    assert [f for f in spk201(filename, text) if "encoded" in f[2]] == []


def test_a_secret_data_value_is_reported_once_by_its_own_reader() -> None:
    encoded = base64.b64encode(HF.encode()).decode()
    found = spk201("secret.yaml", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  HF_TOKEN: {encoded}\n")
    assert len(found) == 1 and "encoded" not in found[0][2]


def test_hostile_encodings_stay_within_their_bounds() -> None:
    """base64 of base64 of a megabyte, and a file of a hundred thousand encoded-looking values: decoded only
    up to the per-value and per-text budgets, in well under a second."""
    megabyte = base64.b64encode(base64.b64encode(b"A" * (1 << 20))).decode()
    many = "\n".join(f"k{i}: {base64.b64encode(f'value number {i} of many'.encode()).decode()}" for i in range(100_000))
    started = time.perf_counter()
    assert encoded_secrets(f"blob: {megabyte}\n") == []
    assert encoded_secrets(many) == []
    assert time.perf_counter() - started < 5.0


def test_a_base64_value_right_after_an_equals_sign_is_decoded() -> None:
    """``BLOB=<base64>`` in a .env: the run of base64 starts right after ``=`` (it was skipped there)."""
    encoded = base64.b64encode(TOKEN.encode()).decode()
    found = spk201(".env", f"BLOB={encoded}\n")
    assert [(line, column) for line, column, _ in found] == [(1, 6)]
    assert "base64-encoded" in found[0][2]
