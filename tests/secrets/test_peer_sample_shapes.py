"""Shapes the peer scanner's own samples showed (bench/peer_samples.py), in invented values: tokens to find
wherever they are written or encoded, and near misses to leave alone."""

from __future__ import annotations

import base64

from spikelint.engine import lint_snippet

SECRETS = {"select": ["SPK2"]}


def found(filename: str, text: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.rule) for finding in lint_snippet(filename, text, SECRETS)]


def test_an_aws_key_id_whose_base64_has_no_digit_is_decoded() -> None:
    """``ACCA…`` encodes to letters only: the base64 of text is recognised by its shape, not by a digit."""
    key_id = "ACCA" + "5X5PK5SX2HPYH355"
    encoded = base64.b64encode(key_id.encode()).decode()
    assert not any(character.isdigit() for character in encoded)
    assert found(".env", f"BLOB={encoded}\n") == [(1, "SPK201")]


def test_a_jwt_with_an_escaped_slash_or_no_signature_is_a_jwt() -> None:
    unsigned = "eyQ7hZ2mK9pL4xR8tV1wN" + ".eyB3nM6qT0sW5yA2cE7gJ" + "."
    escaped = "eyQ7hZ2mK9pL4xR8tV1wN" + ".eyB3nM6q\\/T0sW5yA2cE7gJ" + ".Zk3Lm9Qp2Rt7Vx"
    assert found("auth.env", f'JWT_TOKEN="{unsigned}"\n') == [(1, "SPK201")]
    assert found("auth.json", f'{{"jwt": "{escaped}"}}\n') == [(1, "SPK201")]


def test_a_telegram_shape_inside_a_longer_word_is_not_a_bot_token() -> None:
    type_name = 'type="clm08453852:AgencyIdentificationCodeContentType"'
    longer_id = 'bot = "22153361153766284:' + "Azlc9p66pmm3xn8v_3q3a9mf8w8xwjje86k" + '"'
    real = 'bot = "84513296:' + "AAF3kQ9zVx2LmP7wR4tY8uI1oN6bH5cE0dJ" + '"'
    assert found("schema.xml", type_name + "\n") == []
    assert found("bot.txt", longer_id + "\n") == []
    assert found("bot2.txt", real + "\n") == [(1, "SPK201")]


def test_public_and_per_session_keys_are_not_credentials() -> None:
    text = ('publicToken = "9Xnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"\n'
            'csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7V4eUrLfpu\n'
            'private_token = "9Xnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"\n')
    assert found("app.env", text) == [(3, "SPK201")]


def test_an_xml_type_name_under_a_token_key_is_an_identifier() -> None:
    assert found("bot.py", 'telegram_api_token = "clm28088:AgencyIdentificationCodeContentType"\n') == []
