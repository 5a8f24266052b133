"""Values that are code, not credentials, under secret-named keys: an Azure Resource Manager template
expression and a dotted name.  A real random value in the same place still fires."""

from __future__ import annotations

import random
import secrets
import string

import pytest

from spikelint.engine import lint_snippet


def _random_password() -> str:
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(14)) + "#7"


def _secret_rules(filename: str, text: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.rule) for finding in lint_snippet(filename, text) if finding.rule.startswith("SPK2")]


ARM = '{{\n  "parameters": {{\n    "adminPassword": {{\n      "value": "{value}"\n    }}\n  }}\n}}\n'


def test_an_arm_template_expression_is_not_a_password() -> None:
    assert _secret_rules("azuredeploy.json", ARM.format(value="[parameters('adminPasswordOrKey')]")) == []


def test_a_literal_password_in_the_same_place_fires() -> None:
    assert _secret_rules("azuredeploy.json", ARM.format(value=_random_password())) == [(4, "SPK201")]


@pytest.mark.parametrize("value, fires", [("sc._jvm.org.vault.tokenlibrary.TokenLibrary", False),
                                          (None, True)], ids=["dotted-name", "random-literal"])
def test_a_dotted_name_under_a_token_key_is_code(value: str | None, fires: bool) -> None:
    pick = random.Random(32).choice  # one fixed random literal: a drawn one is now and then a placeholder's shape
    literal = value or "".join(pick(string.ascii_letters + string.digits) for _ in range(32))
    text = f'settings:\n  access_token: "{literal}"\n'
    assert bool(_secret_rules("job.yaml", text)) == fires


def test_openssl_pass_from_a_variable_is_a_reference() -> None:
    text = '#!/bin/bash\nseed="$1"\nopenssl enc -aes-256-ctr -pass pass:"$seed" -nosalt </dev/zero\n'
    assert _secret_rules("seeded.sh", text) == []


def test_openssl_pass_with_a_literal_fires() -> None:
    text = f"#!/bin/bash\nopenssl enc -aes-256-cbc -pass pass:{_random_password()} -in a -out b\n"
    assert _secret_rules("encrypt.sh", text) == [(2, "SPK203")]


def test_an_azure_data_lake_container_before_the_at_is_not_a_token() -> None:
    text = 'path = "abfss://9c1f4e2a-7b3d-4c8e-a5f6-2d9e8b7a1c3f@onelake.dfs.example.net/ws/Files/docs"\n'
    assert _secret_rules("ingest.py", text) == []


def test_a_token_before_the_at_of_a_git_url_still_fires() -> None:
    token = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
    text = f'#!/bin/bash\ngit clone https://{token}@git.example.org/team/repo.git\n'
    assert [rule for _, rule in _secret_rules("clone.sh", text)]


def test_a_value_built_from_a_variable_on_a_command_line_is_no_literal() -> None:
    """``gcloud … --set-secrets "DB_PASSWORD=db-password-${PROJECT_ID}:1"`` names a secret built from a variable;
    the reader stops at the ``}``, and what is left is still an expression."""
    script = '#!/bin/bash\ngcloud run deploy api \\\n  --set-secrets "DB_PASSWORD=db-password-${PROJECT_ID}:1"\n'
    assert _secret_rules("deploy.sh", script) == []
    literal = script.replace("db-password-${PROJECT_ID}:1", _random_password())
    assert _secret_rules("deploy.sh", literal) == [(3, "SPK201")]


# --------------------------------------------------------------------------- shell defaults and password hashes


@pytest.mark.parametrize("line", ['ROOK_PASS="${ROOK_PASS:-deepops}"', "ROOK_PASS=${ROOK_PASS:-deepops}",
                                  'DB_PASSWORD="${DB_PASSWORD:?set DB_PASSWORD first}"',
                                  'DB_PASSWORD="${DB_PASSWORD:+--password-file /run/secrets/db}"'],
                         ids=["quoted-word-default", "plain-word-default", "error-message", "alternative"])
def test_a_shell_default_that_is_a_word_or_no_value_is_no_secret(line: str) -> None:
    assert _secret_rules("deploy.sh", f"#!/bin/bash\n{line}\n") == []


@pytest.mark.parametrize("template", ['DB_PASSWORD="${{DB_PASSWORD:-{value}}}"', "DB_PASSWORD=${{DB_PASSWORD:={value}}}"],
                         ids=["fallback", "assigned-default"])
def test_a_random_literal_as_a_shell_default_is_a_hardcoded_password_at_its_column(template: str) -> None:
    value = _random_password()
    line = template.format(value=value)
    findings = [f for f in lint_snippet("deploy.sh", f"#!/bin/bash\n{line}\n") if f.rule == "SPK201"]
    assert [(f.line, f.column) for f in findings] == [(2, line.index(value) + 1)]


@pytest.mark.parametrize("value", ["$6$rounds=5000$Ab3dEf9hIjK$Vq1w2e3r4t5y6u7i8o9p0aSdFgHjKlZxCvBnM.q/w1e2r3t4y5u6i7o8p9",
                                   "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
                                   "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7",
                                   "$apr1$x7Qe2Lk9$Ry0c9Wq3b8Zt1Ms6Hp4Vn/"],
                         ids=["sha512-crypt", "bcrypt", "yescrypt", "apr1"])
def test_a_password_hash_under_a_password_key_is_no_credential(value: str) -> None:
    assert _secret_rules("group_vars/all.yml", f'users:\n  - name: admin\n    password: "{value}"\n') == []


# --------------------------------------------------------------------------- datasets written as JSON arrays


def _conversations(records: int, answer: str) -> str:
    import json

    record = {"conversations": [{"from": "human", "value": "Make me a password of 12 characters"},
                                {"from": "observation", "value": json.dumps({"password": answer})},
                                {"from": "gpt", "value": f"Here is your new password: {answer}."}]}
    return json.dumps([record] * records, indent=2) + "\n"


def test_a_generated_password_in_a_json_dataset_is_a_sample_not_a_leak() -> None:
    assert _secret_rules("data/toolcall_demo.json", _conversations(20, _random_password())) == []


def test_a_token_shape_in_a_json_dataset_still_fires() -> None:
    pick = random.Random(7).choice
    token = "hf_" + "".join(pick(string.ascii_letters) for _ in range(34))
    assert {rule for _, rule in _secret_rules("data/toolcall_demo.json", _conversations(20, token))} == {"SPK201"}


@pytest.mark.parametrize("filename, records", [("config/users.json", 3), ("roles/db/tasks/main.yml", 20)],
                         ids=["short-json-array", "yaml-task-list"])
def test_a_short_json_array_or_a_yaml_list_is_configuration_and_its_password_fires(filename: str,
                                                                                  records: int) -> None:
    value = _random_password()
    if filename.endswith(".json"):
        text = _conversations(records, value).replace('"observation"', '"tool"')
        text = '[{"name": "db", "password": "' + value + '"}]\n' if records == 3 else text
    else:
        text = "".join(f"- name: step {index}\n  user: {{name: app, password: \"{value}\"}}\n" for index in range(records))
    assert "SPK201" in {rule for _, rule in _secret_rules(filename, text)}


# --------------------------------------------------------------------------- a submitter's --secret ENV=STORED_NAME


@pytest.mark.parametrize("mapping", ["HF_TOKEN=team_HF_TOKEN", "S2_API_KEY=hamish_S2_API_KEY",
                                     "OPENAI_API_KEY=openai-api-key"])
def test_a_secret_flag_that_names_the_stored_secret_is_a_reference(mapping: str) -> None:
    text = f"#!/bin/bash\npython submit.py --gpus 8 --secret {mapping} -- torchrun train.py\n"
    assert _secret_rules("scripts/submit.sh", text) == []


def test_a_secret_flag_with_the_token_itself_fires_at_the_token() -> None:
    pick = random.Random(11).choice
    token = "hf_" + "".join(pick(string.ascii_letters) for _ in range(34))
    line = f"python submit.py --gpus 8 --secret HF_TOKEN={token} -- torchrun train.py"
    findings = [f for f in lint_snippet("scripts/submit.sh", f"#!/bin/bash\n{line}\n") if f.rule.startswith("SPK2")]
    assert [(f.line, f.column, f.rule) for f in findings] == [(2, line.index(token) + 1, "SPK203")]
