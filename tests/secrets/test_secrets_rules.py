"""SPK201–SPK207 end to end: each rule fires at the exact line of the value, and not on the near misses."""

from __future__ import annotations

import json

import pytest
from fakes import Fakes

from spikelint.engine import lint_snippet
from spikelint.model import Finding

FAKE = Fakes(7)
SECRETS_ONLY = {"select": ["SPK2"]}


def found(filename: str, text: str, extra: dict[str, str] | None = None) -> list[tuple[int, str]]:
    return [(finding.line, finding.rule) for finding in lint(filename, text, extra)]


def lint(filename: str, text: str, extra: dict[str, str] | None = None) -> list[Finding]:
    return lint_snippet(filename, text, SECRETS_ONLY, extra_files=extra)


# --------------------------------------------------------------------------- SPK201 hardcoded-secret


def test_config_values_under_secret_named_keys() -> None:
    text = (f"logger:\n  wandb:\n    project: gpt\n    api_key: {FAKE.wandb()}\n"
            f"hub:\n  repo_id: acme/gpt\n  token: {FAKE.hf()}\n  revision: {FAKE.wandb()}\n")
    assert found("conf/config.yaml", text) == [(4, "SPK201"), (7, "SPK201")]


def test_config_references_and_placeholders_do_not_fire() -> None:
    text = ("logger:\n  wandb:\n    api_key: ${oc.env:WANDB_API_KEY}\nhub:\n  token: <your token>\n"
            "  secret_name: hf-credentials\n  existingSecret: hf\ndb:\n  password: changeme\n"
            "  password_file: /run/secrets/db\n  pad_token: '<pad>'\n  max_tokens: 4096\n")
    assert found("conf/config.yaml", text) == []


def test_token_anywhere_in_yaml_multi_document_and_flow_style() -> None:
    text = f"a: 1\n---\nhelpers: {{note: 'use {FAKE.github()} for ci'}}\n"
    assert found("misc.yaml", text) == [(3, "SPK201")]


def test_json_config() -> None:
    text = json.dumps({"model": "bert", "hub_token": FAKE.hf(), "seed": 1}, indent=1)
    assert found("train_args.json", text) == [(3, "SPK201")]


def test_toml_config() -> None:
    text = f'[job]\nname = "x"\n[metrics]\nwandb_api_key = "{FAKE.wandb()}"\ncommit = "{FAKE.wandb()}"\n'
    assert found("job.toml", text) == [(4, "SPK201")]


def test_python_literals_with_their_binding() -> None:
    text = (
        "import os\nimport wandb\nfrom openai import OpenAI\n"
        f"client = OpenAI(api_key=\"{FAKE.openai()}\")\n"
        f"os.environ[\"HF_TOKEN\"] = \"{FAKE.hf()}\"\n"
        f"wandb.login(key=\"{FAKE.wandb()}\")\n"
        f"REVISION = \"{FAKE.wandb()}\"\n"
        "token = os.environ[\"HF_TOKEN\"]\n"
        f"config = {{\"password\": \"{FAKE.password()}\", \"user\": \"bob\"}}\n"
    )
    assert found("train.py", text) == [(4, "SPK201"), (5, "SPK201"), (6, "SPK201"), (9, "SPK201")]


def test_env_file_and_plain_text() -> None:
    text = f"# local settings\nWANDB_MODE=offline\nWANDB_API_KEY={FAKE.wandb()}\nHF_TOKEN=\nDB_PASSWORD=${{DB_PASSWORD}}\n"
    assert found(".env", text) == [(3, "SPK201")]


def test_private_key_block_pasted_into_a_config() -> None:
    block = FAKE.private_key().replace("\n", "\n    ")
    text = f"ssh:\n  host: example.org\n  key: |\n    {block}\n"
    assert found("deploy.yaml", text) == [(4, "SPK201")]


def test_url_with_password_in_a_config() -> None:
    text = f"data:\n  uri: s3://bucket/ds\n  mirror: https://ml:{FAKE.password()}@mirror.example.org/simple\n"
    assert found("data.yaml", text) == [(3, "SPK201")]


def test_markdown_docs_with_placeholders_stay_quiet() -> None:
    text = ("# Setup\n\n```bash\nexport HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nexport WANDB_API_KEY=<key>\n"
            "huggingface-cli login --token $HF_TOKEN\n```\n")
    assert found("README.md", text) == []


# --------------------------------------------------------------------------- SPK202 secret-env-literal

POD = """apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
    - name: main
      image: harbor.example.org/ml/train:1.0.0
      env:
        - name: TOKENIZERS_PARALLELISM
          value: "false"
        - name: WANDB_API_KEY
          value: {wandb}
        - name: DB_PASSWORD
          value: hunter2
        - name: HF_TOKEN
          valueFrom:
            secretKeyRef: {{name: hf, key: token}}
        - name: OPENAI_API_KEY
          value: ""
        - name: AUTH_URL
          value: https://auth.example.org
        - name: NOTE
          value: {github}
"""


def test_kubernetes_env_literals() -> None:
    text = POD.format(wandb=FAKE.wandb(), github=FAKE.github())
    # the GitHub token under a neutral name is a hardcoded secret, not an env-literal finding
    assert found("pod.yaml", text) == [(13, "SPK202"), (15, "SPK202"), (24, "SPK201")]


def test_runai_crd_env_literals() -> None:
    text = (f"apiVersion: run.ai/v2alpha1\nkind: TrainingWorkload\nmetadata:\n  name: t\nspec:\n  image:\n"
            f"    value: harbor.example.org/ml/train:1.0.0\n  environment:\n    items:\n      HF_TOKEN:\n"
            f"        value: {FAKE.hf()}\n      WANDB_API_KEY:\n        value: SECRET:wandb,api-key\n"
            f"      NCCL_DEBUG: {{value: WARN}}\n")
    assert found("tw.yaml", text) == [(11, "SPK202")]


def test_runai_rest_env_literals() -> None:
    body = {"name": "x", "projectId": "1", "clusterId": "c", "spec": {
        "image": "harbor.example.org/ml/train:1.0.0", "compute": {"gpuDevicesRequest": 1},
        "environmentVariables": [
            {"name": "HF_TOKEN", "value": FAKE.hf()},
            {"name": "WANDB_API_KEY", "secret": {"name": "wandb", "key": "api-key"}},
            {"name": "MODE", "value": "fast"}]}}
    text = json.dumps(body, indent=1)
    line = next(number for number, row in enumerate(text.splitlines(), 1) if '"hf_' in row)
    assert found("workload.json", text) == [(line, "SPK202")]


def test_runai_cli_env_literals() -> None:
    text = ("#!/bin/bash\nrunai training submit t \\\n  -i harbor.example.org/ml/train:1.0.0 \\\n"
            f"  -e WANDB_API_KEY={FAKE.wandb()} \\\n  -e HF_TOKEN=SECRET:hf,token \\\n"
            "  --env-secret GH_TOKEN=gh,key=token \\\n  -- python train.py\n")
    assert found("launch.sh", text) == [(4, "SPK202")]


def test_dockerfile_env_and_arg_defaults() -> None:
    text = ("FROM harbor.example.org/base/python:3.11.9@sha256:" + "a" * 64 + "\n"
            f"ARG HF_TOKEN={FAKE.hf()}\nARG GITHUB_TOKEN\nENV WANDB_API_KEY={FAKE.wandb()} MODE=fast\n"
            f"ENV AWS_SECRET_ACCESS_KEY {FAKE.aws_secret()}\nENV TOKENIZERS_PARALLELISM=false\n"
            "ENV HF_HOME=/data/hf\nARG PASSWORD=${PASSWORD}\n")
    assert found("Dockerfile", text) == [(2, "SPK202"), (4, "SPK202"), (5, "SPK202")]


# --------------------------------------------------------------------------- SPK203 secret-on-command-line


def test_launch_script_command_lines() -> None:
    token = FAKE.hf()
    text = ("#!/usr/bin/env bash\nset -euo pipefail\n"
            f"huggingface-cli login --token {token}\n"
            f"curl -fsSL -H \"Authorization: Bearer {token}\" -o t.json https://huggingface.co/x\n"
            f"git clone https://mlbot:{FAKE.password()}@git.example.org/ml/tools.git\n"
            f"python train.py --hub_token={FAKE.hf()}\n"
            "huggingface-cli login --token \"$HF_TOKEN\"\n"
            "curl -H \"Authorization: Bearer ${HF_TOKEN}\" https://x\n"
            "echo \"$PW\" | docker login -u bot --password-stdin harbor.example.org\n"
            f"docker login -u bot -p {FAKE.password()} harbor.example.org\n"
            "python train.py --token-file /run/secrets/hf\n"
            f"export HF_TOKEN={FAKE.hf()}\n")
    assert found("fetch.sh", text) == [(3, "SPK203"), (4, "SPK203"), (5, "SPK203"), (6, "SPK203"), (10, "SPK203"),
                                       (12, "SPK201")]


def test_continuation_lines_point_at_the_value_line() -> None:
    text = f"#!/bin/sh\npython train.py \\\n  --output_dir /ckpt \\\n  --wandb_api_key {FAKE.wandb()} \\\n  --seed 1\n"
    assert found("run.sh", text) == [(4, "SPK203")]


def test_workload_command_and_args() -> None:
    text = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n        - name: main\n"
            "          image: harbor.example.org/ml/train:1.0.0\n"
            "          command: [\"bash\", \"-c\"]\n          args:\n            - |\n"
            "              pip install -q datasets\n"
            f"              huggingface-cli login --token {FAKE.hf()}\n"
            "              python train.py\n"
            f"        - name: side\n          image: harbor.example.org/ml/train:1.0.0\n"
            f"          args: [\"--api-key\", \"{FAKE.high_entropy(32)}\", \"--token\", \"$(HF_TOKEN)\"]\n")
    assert found("job.yaml", text) == [(15, "SPK203"), (19, "SPK203")]


def test_runai_inline_storage_credentials() -> None:
    text = ("runai submit t -i harbor.example.org/ml/train:1.0.0 \\\n"
            f"  --s3 bucket=ds,key={FAKE.aws_key_id()},secret={FAKE.aws_secret()},url=https://s3.example.org \\\n"
            f"  --git-sync source=https://git.example.org/x.git,user=bot,password={FAKE.password()} \\\n"
            "  --git-sync name=code,repository=https://git.example.org/y.git,secret=git-creds\n")
    assert found("submit.sh", text) == [(2, "SPK203"), (2, "SPK203"), (3, "SPK203")]


def test_dockerfile_run_lines() -> None:
    text = ("FROM harbor.example.org/base/python:3.11.9@sha256:" + "a" * 64 + "\n"
            f"RUN pip install \"git+https://{FAKE.github()}@github.com/acme/lib.git@v1\"\n"
            "RUN pip install \"git+https://${GITHUB_TOKEN}@github.com/acme/lib.git@v1\"\n"
            "RUN --mount=type=secret,id=hf HF_TOKEN=$(cat /run/secrets/hf) huggingface-cli download x\n")
    assert found("Dockerfile", text) == [(2, "SPK203")]


# --------------------------------------------------------------------------- notebooks (SPK201, SPK203, SPK204, SPK207)


def notebook(cells: list[dict[str, object]]) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def code(source: list[str], outputs: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": outputs or [], "source": source}


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    rows = [number for number, row in enumerate(text.splitlines(), 1) if needle in row]
    return rows[occurrence - 1]


def test_notebook_sources_outputs_and_committed_outputs() -> None:
    token = FAKE.hf()
    key = FAKE.wandb()
    text = notebook([
        {"cell_type": "markdown", "metadata": {}, "source": ["# Explore\n", "Token goes in `HF_TOKEN`."]},
        code(["import os\n", f"os.environ[\"HF_TOKEN\"] = \"{token}\""]),
        code([f"%env WANDB_API_KEY={key}\n", f"!pip install git+https://{FAKE.github()}@github.com/acme/x.git"],
             [{"output_type": "stream", "name": "stdout", "text": [f"env: WANDB_API_KEY={key}\n"]}]),
        code(["print(1)"], [{"output_type": "display_data", "metadata": {},
                             "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4",
                                      "text/plain": ["<Figure>"]}}]),
        code(["requests.get(url).raise_for_status()"], [{
            "output_type": "error", "ename": "HTTPError", "evalue": f"401 for url: https://x/api?token={token}",
            "traceback": ["\u001b[0;31mHTTPError\u001b[0m: 401"]}]),
    ])
    got = found("nb.ipynb", text)
    assert got == sorted([
        (line_of(text, f'= \\"{token}'), "SPK201"),
        (line_of(text, "%env"), "SPK201"),
        (line_of(text, "!pip"), "SPK203"),
        (line_of(text, '"output_type": "stream"') - 1, "SPK207"),
        (line_of(text, "env: WANDB"), "SPK204"),
        (line_of(text, '"evalue"'), "SPK204"),
    ])


def test_spk204_names_the_cell_and_spk207_counts_cells() -> None:
    text = notebook([code(["x = 1"]), code(["print(t)"], [{"output_type": "stream", "name": "stdout",
                                                           "text": [f"token {FAKE.hf()}\n"]}])])
    findings = lint("nb.ipynb", text)
    assert [finding.rule for finding in findings] == ["SPK207", "SPK204"]
    assert "cell 1" in findings[1].message and "1 code cell" in findings[0].message


def test_clean_notebook_is_quiet() -> None:
    text = notebook([code(["import os\n", "token = os.environ[\"HF_TOKEN\"]"])])
    assert found("nb.ipynb", text) == []


def test_notebook_html_output_is_scanned() -> None:
    text = notebook([code(["display(t)"], [{"output_type": "display_data", "metadata": {},
                                            "data": {"text/html": [f"<b>{FAKE.hf()}</b>"]}}])])
    assert [rule for _, rule in found("nb.ipynb", text)] == ["SPK207", "SPK204"]


# --------------------------------------------------------------------------- SPK206 credential-file


def test_kubernetes_secret_with_data() -> None:
    text = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: wandb\ntype: Opaque\nstringData:\n"
            f"  api-key: {FAKE.wandb()}\n  user: bob\n  empty: ''\n  placeholder: <changeme>\n")
    assert found("secret.yaml", text) == [(7, "SPK206")]  # a user name beside the key is not a credential


def test_kubernetes_secret_base64_data_and_placeholder_data() -> None:
    import base64

    real = base64.b64encode(FAKE.password().encode()).decode()
    placeholder = base64.b64encode(b"changeme").decode()
    text = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {real}\n  other: {placeholder}\n"
    assert found("secret.yaml", text) == [(6, "SPK206")]


def test_external_and_sealed_secrets_are_not_credential_files() -> None:
    text = ("apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata: {name: x}\nspec:\n"
            f"  encryptedData:\n    token: Ag{FAKE.high_entropy(60)}\n")
    assert found("sealed.yaml", text) == []


def test_kustomize_secret_generator_literals() -> None:
    text = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nsecretGenerator:\n  - name: wandb\n"
            f"    literals:\n      - api-key={FAKE.wandb()}\n      - mode=${{MODE}}\n  - name: files\n    envs: [secrets.env]\n")
    assert found("kustomization.yaml", text) == [(6, "SPK206")]


def test_docker_config_auths() -> None:
    text = json.dumps({"auths": {"harbor.example.org": {"auth": FAKE.docker_auth("robot$ml+ci")},
                                 "ghcr.io": {"auth": ""}}}, indent=1)
    findings = lint(".docker/config.json", text)
    assert [(finding.line, finding.rule) for finding in findings] == [(4, "SPK206")]
    assert "Harbor robot" in findings[0].message


def test_netrc_git_credentials_aws_credentials() -> None:
    assert found(".netrc", f"machine huggingface.co\n  login hf\n  password {FAKE.hf()}\n") == [(3, "SPK206")]
    assert found(".git-credentials", f"https://bot:{FAKE.github()}@github.com\n") == [(1, "SPK206")]
    text = f"[default]\naws_access_key_id = {FAKE.aws_key_id()}\naws_secret_access_key = {FAKE.aws_secret()}\nregion = eu-west-1\n"
    assert found(".aws/credentials", text) == [(2, "SPK206"), (3, "SPK206")]
    assert found(".netrc", "machine huggingface.co login hf password <token>\n") == []


def test_private_key_file_and_gcp_service_account() -> None:
    assert found("deploy/id_rsa", FAKE.private_key()) == [(1, "SPK206")]
    key = FAKE.private_key()
    text = json.dumps({"type": "service_account", "project_id": "p", "private_key_id": FAKE.wandb(),
                       "private_key": key, "client_email": "sa@p.iam.gserviceaccount.com"}, indent=1)
    assert found("sa.json", text) == [(5, "SPK206")]


def test_kubeconfig_with_token() -> None:
    text = ("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://k8s.example.org}}]\n"
            f"users:\n  - name: bot\n    user:\n      token: {FAKE.jwt()}\n  - name: oidc\n    user:\n"
            "      exec: {command: kubelogin}\n")
    assert found("kubeconfig.yaml", text) == [(7, "SPK206")]


# --------------------------------------------------------------------------- positions, messages, keys


def test_finding_points_at_the_value_column() -> None:
    token = FAKE.hf()
    text = f"hub:\n  token: {token}\n"
    (finding,) = lint("c.yaml", text)
    assert (finding.line, finding.column) == (2, 10)


def test_messages_never_hold_the_secret_and_fingerprints_are_stable() -> None:
    token = FAKE.hf()
    first = lint("c.yaml", f"hub:\n  token: {token}\n")
    moved = lint("c.yaml", f"# a comment\n\nhub:\n  token: {token}\n")
    assert token not in first[0].message and token[:4] + "…" in first[0].message
    assert first[0].fingerprint == moved[0].fingerprint


@pytest.mark.parametrize("filename,text", [
    ("x.yaml", "- [1, {a: null}]\n- !!binary aGVsbG8=\n"),
    ("x.json", "[1, 2, null, {\"env\": 3}]"),
    ("x.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": 3, "outputs": {"a": 1}}], "nbformat": 4})),
    ("x.yaml", "apiVersion: v1\nkind: Secret\ndata: [1, 2]\nstringData: null\n"),
    ("x.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - env: 7\n      command: {a: 1}\n"),
    ("x.toml", "a = 1\n[b]\nc = [1, 2]\n"),
])
def test_wrong_shapes_are_skipped_quietly(filename: str, text: str) -> None:
    assert [finding.rule for finding in lint(filename, text) if finding.rule != "SPK001"] == []


def test_harbor_robot_credentials_are_named() -> None:
    secret = FAKE.high_entropy(32)
    config = f"registry:\n  host: harbor.example.org\n  username: robot$ml+ci\n  password: {secret}\n"
    (finding,) = lint("registry.yaml", config)
    assert (finding.line, finding.rule) == (4, "SPK201") and "Harbor robot credentials" in finding.message
    crd = ("apiVersion: run.ai/v2alpha1\nkind: InteractiveWorkload\nmetadata:\n  name: n\nspec:\n  image:\n"
           "    value: harbor.example.org/nb/jupyter:1.0.0\n  environment:\n    items:\n"
           f"      REGISTRY_USER:\n        value: robot$nlp+ci\n      REGISTRY_PASSWORD:\n        value: {secret}\n")
    (finding,) = lint("nb.yaml", crd)
    assert (finding.line, finding.rule) == (13, "SPK202") and "Harbor robot credentials" in finding.message


def test_notebook_cell_magics() -> None:
    bash = code(["%%bash\n", f"huggingface-cli login --token {FAKE.hf()}\n", f"export WANDB_API_KEY={FAKE.wandb()}\n"])
    timed = code(["%%time\n", f"api_key = \"{FAKE.high_entropy(32)}\"\n", "x = 1"])
    written = code(["%%writefile .env\n", f"HF_TOKEN={FAKE.hf()}\n"])
    text = notebook([bash, timed, written])
    assert found("nb.ipynb", text) == sorted([
        (line_of(text, "login --token"), "SPK203"), (line_of(text, "export WANDB_API_KEY"), "SPK201"),
        (line_of(text, "api_key ="), "SPK201"), (line_of(text, "HF_TOKEN="), "SPK201")])


def test_the_same_token_twice_in_one_block_gives_two_findings() -> None:
    token = FAKE.hf()
    text = f"script: |\n  echo start\n  export A={token}\n  echo middle\n  export B={token}\n"
    assert found("ci.yaml", text) == [(3, "SPK201"), (5, "SPK201")]
    code_text = f'NOTE = """\nfirst {token}\nsecond {token}\n"""\n'
    assert found("notes.py", code_text) == [(2, "SPK201"), (3, "SPK201")]


def test_everything_inside_a_bash_c_string_is_on_the_command_line() -> None:
    token = FAKE.hf()
    script = (f"#!/bin/bash\nexport HF_TOKEN={token}\n"
              f"runai training submit t -i harbor.example.org/ml/t:1.0.0 -- bash -c \"export HF_TOKEN={token} && python t.py\"\n"
              f"docker run --rm harbor.example.org/ml/t:1.0.0 sh -c 'WANDB_API_KEY={FAKE.wandb()} python t.py'\n")
    assert found("run.sh", script) == [(2, "SPK201"), (3, "SPK203"), (4, "SPK203")]
    dockerfile = ("FROM harbor.example.org/b/p:1.0.0@sha256:" + "a" * 64 + "\n"
                  f"RUN export HF_TOKEN={FAKE.hf()} && huggingface-cli download acme/m\n")
    assert found("Dockerfile", dockerfile) == [(2, "SPK203")]


def test_positional_secrets_and_netrc_lines_in_scripts() -> None:
    text = (f"#!/bin/sh\naws configure set aws_secret_access_key {FAKE.aws_secret()}\n"
            f"git config --global github.token {FAKE.high_entropy(40)}\n"
            f"printf 'machine minio.example.org login ml password {FAKE.password()}\\n' > ~/.netrc\n"
            "aws configure set region eu-west-1\ngrep token notes.txt\nkubectl get secret hf-token -o yaml\n")
    assert found("setup.sh", text) == [(2, "SPK203"), (3, "SPK203"), (4, "SPK201")]


def test_kaggle_and_ngc_credential_files() -> None:
    assert found("kaggle.json", json.dumps({"username": "bob", "key": FAKE.wandb()[:32]})) == [(1, "SPK206")]
    assert found(".ngc/config", f"[CURRENT]\napikey = {FAKE.high_entropy(84)}\nformat_type = ascii\n") == [(2, "SPK206")]


def test_a_value_falls_back_to_spk201_when_the_specific_rule_is_off() -> None:
    text = POD.format(wandb=FAKE.wandb(), github=FAKE.github())
    only_general = lint_snippet("pod.yaml", text, {"select": ["SPK201"]})
    assert [(finding.line, finding.rule) for finding in only_general] == [(13, "SPK201"), (15, "SPK201"), (24, "SPK201")]
    without_env_rule = lint_snippet("pod.yaml", text, {"select": ["SPK2"], "ignore": ["SPK202"]})
    assert [finding.rule for finding in without_env_rule] == ["SPK201"] * 3
