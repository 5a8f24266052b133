"""A credential read by two recognisers (file text and parsed object) is reported once."""

from __future__ import annotations

import json

from spikelint.engine import lint_snippet

KEY = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
       "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----\n")


def test_service_account_key_file_gets_one_spk206() -> None:
    text = json.dumps({"type": "service_account", "project_id": "acme-ml", "private_key": KEY,
                       "client_email": "trainer@acme-ml.iam.gserviceaccount.com"}, indent=2) + "\n"
    findings = lint_snippet("keys/sa-key.json", text)
    assert [(finding.line, finding.rule) for finding in findings] == [(4, "SPK206")]


def test_service_account_object_under_another_name_still_reported() -> None:
    text = json.dumps({"type": "service_account", "private_key": KEY, "client_email": "x@y.iam.gserviceaccount.com"},
                      indent=2) + "\n"
    findings = lint_snippet("deploy/trainer.json", text)
    assert [(finding.line, finding.rule) for finding in findings] == [(3, "SPK206")]
