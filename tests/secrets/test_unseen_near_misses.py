"""Near misses met on repositories spikelint had never seen (issue 33's measurement), in invented values:
a digest under a key that names a secret's checksum, a role under an AUTH-named variable, a Sentry DSN, the
connection settings beside a Secret's password, a certificate folded over lines, a documented default."""

from __future__ import annotations

import base64
import hashlib

from fakes import Fakes

from spikelint.engine import lint_snippet

FAKE = Fakes(33)
SECRETS = {"select": ["SPK2"]}


def found(filename: str, text: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.rule) for finding in lint_snippet(filename, text, SECRETS)]


def test_a_checksum_of_a_secret_is_a_digest_not_the_secret() -> None:
    """Helm charts roll pods when a Secret changes by annotating them with its SHA-256."""
    digest = hashlib.sha256(b"values").hexdigest()
    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata:\n"
            f"      annotations:\n        checksum/secret: {digest}\n        checksum/configuration-secret: {digest}\n"
            f"        api-token: {FAKE.high_entropy(40)}\n")
    assert found("deploy.yaml", text) == [(10, "SPK201")]


def test_a_role_under_an_auth_named_variable_is_not_a_secret() -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: grafana}\nspec:\n  containers:\n    - name: g\n"
            "      image: grafana/grafana:10.4.2\n      env:\n        - name: GF_AUTH_ANONYMOUS_ORG_ROLE\n"
            "          value: Viewer\n        - name: GF_AUTH_ADMIN_PASSWORD\n"
            f"          value: {FAKE.password()}\n")
    assert found("grafana.yaml", text) == [(12, "SPK202")]


def test_a_sentry_dsn_is_public_but_a_token_in_another_url_is_not() -> None:
    key = hashlib.md5(b"project").hexdigest()
    text = (f'const dsn = "https://{key}@o4507.ingest.us.sentry.io/4507"\n'
            f'const legacy = "https://{key}@sentry.io/1234"\n'
            f'const mirror = "https://{FAKE.high_entropy(32)}@git.example.org/team/repo.git"\n')
    assert found("telemetry.go", text) == [(3, "SPK201")]


def test_a_secrets_connection_settings_are_not_credentials() -> None:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    text = ("apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata:\n"
            f"  POSTGRES_USER: {b64('trainer')}\n  POSTGRES_PASSWORD: {b64(FAKE.password())}\n"
            f"  POSTGRES_DB: {b64('runs')}\n  host: {b64('db.internal')}\n")
    assert found("secret.yaml", text) == [(6, "SPK206")]


def test_a_certificate_folded_over_lines_is_public_and_its_key_is_not() -> None:
    certificate = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + b"MIIB" * 40 + b"\n-----END CERTIFICATE-----\n")
    folded = "\n".join("    " + certificate[index:index + 64].decode() for index in range(0, len(certificate), 64))
    key = base64.b64encode(FAKE.private_key().encode()).decode()
    text = (f"apiVersion: v1\nkind: Secret\nmetadata: {{name: ca}}\ndata:\n  ca.crt: >-\n{folded}\n"
            f"  ca.key: {key}\n")
    findings = found("ca.yaml", text)
    assert findings == [(text.splitlines().index(f"  ca.key: {key}") + 1, "SPK206")]


def test_a_documented_default_password_is_public() -> None:
    """Ray's former built-in Redis password, in its samples as a Secret and in Go test support code."""
    default = "5241590000000000"
    text = ("apiVersion: v1\nkind: Secret\nmetadata: {name: redis-password-secret}\ntype: Opaque\ndata:\n"
            f"  password: {base64.b64encode(default.encode()).decode()}\n")
    assert found("redis.yaml", text) == []
    assert found("redis.go", f'const RedisPassword = "{default}"\n') == []
    assert found("other.go", 'const RedisPassword = "7301930000000000"\n') == [(1, "SPK201")]


def test_a_config_keys_name_under_a_key_named_constant_is_an_identifier() -> None:
    """A vendored SDK names the keys of its own config file in constants called ``…SharedKey``."""
    text = ('const (\n\ts3UsEast1RegionalSharedKey = "s3_us_east_1_regional_endpoint"\n'
            f'\tuploadSigningKey = "{FAKE.high_entropy(32)}"\n)\n')
    assert found("shared_config.go", text) == [(3, "SPK201")]
