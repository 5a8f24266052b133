"""Realistic near misses from ML repositories (no finding allowed) and realistic leaks (each found).

The negatives are the shapes that make secret scanners noisy in training repositories: model ids,
revisions, checksums, tokenizer special tokens, secret *names*, env references, password prompts,
``docker run -p``.  The positives are templates filled with fake tokens at test time.
"""

from __future__ import annotations

import pytest
from fakes import Fakes

from spikelint.engine import lint_snippet

FAKE = Fakes(31)
NEGATIVES = {
    "scripts/launch.sh": """\
#!/bin/bash
kubectl create secret generic exp --from-literal=NEPTUNE_API_TOKEN=$NEPTUNE_API_TOKEN --from-literal=HF_TOKEN=$HF_TOKEN
echo "export HF_TOKEN='your_token_here'"
hf jobs run --token hf_xxx ubuntu -- echo hi
git clone https://$GIT_TOKEN@github.com/aryopg/clinical_peft.git --branch x
docker run -p 8080:8080 -e HF_TOKEN -e WANDB_API_KEY=$WANDB_API_KEY img
mysql -u root -p mydb < dump.sql
read -s -p "Password: " PASSWORD
TOKEN=$(gcloud auth print-access-token)
curl -H "Authorization: Bearer $(gcloud auth print-access-token)" https://x
python train.py --max_tokens 4096 --tokenizer_name meta-llama/Llama-3-8B --pad_token_id 0
python train.py --push_to_hub --hub_model_id acme/model --hub_strategy every_save --report_to wandb
deepspeed --num_gpus 8 train.py --deepspeed ds.json --gradient_checkpointing true
aws s3 cp s3://bucket/key ./ --profile ml
ssh -i ~/.ssh/id_rsa user@host
openssl req -x509 -newkey rsa:4096 -keyout key.pem -out cert.pem -passout pass:$PASS
export PASSWORD=$1
wandb login --relogin
huggingface-cli login --token $HF_TOKEN --add-to-git-credential
accelerate launch --config_file cfg.yaml train.py --secret_name hf-token --auth_type bearer
git config --global credential.helper store
echo "machine api.wandb.ai login user password $WANDB_API_KEY" >> ~/.netrc
sed -i "s/TOKEN_PLACEHOLDER/$TOKEN/" config.yaml
htpasswd -bc .htpasswd admin "$ADMIN_PASSWORD"
""",
    "conf/train.yaml": """\
model:
  name_or_path: meta-llama/Meta-Llama-3-8B
  revision: 5f0b02c75b57c5855da9ae460ce51323ea669d8a
  tokenizer: meta-llama/Meta-Llama-3-8B
  use_auth_token: true
  trust_remote_code: true
tokenizer:
  pad_token: "<|finetune_right_pad_id|>"
  eos_token: "<|eot_id|>"
  chat_template: "{% for m in messages %}{{ m.content }}{% endfor %}"
training:
  max_tokens_per_batch: 16384
  token_dropout: 0.1
  secret_sauce: false
logging:
  wandb:
    project: llama3-sft
    entity: acme
    run_id: 3k2j1h9g
    api_key: ${oc.env:WANDB_API_KEY,???}
  mlflow:
    tracking_uri: http://mlflow.mlflow.svc.cluster.local:5000
    tracking_token: ${MLFLOW_TRACKING_TOKEN}
data:
  sha256: 9f86d081884c7d659a2feaea0c55ad015a3bf4f898b04d3e2d5d6fd0bb0a4a67
  md5: d41d8cd98f00b204e9800998ecf8427e
  commit: 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b
  dataset_id: 9b2c8f5e-4a1d-4f3b-8c7e-2d1a0b9c8e7f
  url: s3://acme-datasets/llama/v3
  endpoint: https://s3.us-east-1.amazonaws.com
auth:
  type: oidc
  issuer: https://login.example.org
  client_id: ml-platform
  client_secret_ref: {name: oidc, key: secret}
  password: ""
  token: null
image_pull_secret: harbor-robot
secretRef: ml-secrets
credentials_path: /var/run/secrets/gcp/key.json
ssh_key_path: ~/.ssh/id_ed25519
key_column: text
cache_key: 7a1b2c3d4e5f60718293a4b5c6d7e8f9
api_key_env_var: OPENAI_API_KEY
hash: 0x1f2e3d4c
""",
    "train.py": """\
import os, getpass, hashlib
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("meta-llama/Llama-2-7b-hf", token=os.environ.get("HF_TOKEN"))
token_ids = tok("hello")["input_ids"]
password = getpass.getpass("Password: ")
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
api_key = None
TOKEN_PATTERN = r"(?u)\\b\\w\\w+\\b"
headers = {"Authorization": f"Bearer {os.environ['API_TOKEN']}"}
if token == "<pad>": pass
pad_token = "<|endoftext|>"
CHECKSUM = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
model_id = "sentence-transformers/all-MiniLM-L6-v2"
run_id = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"
def f(secret_name="hf-token", token_path="/run/secrets/token"): ...
parser.add_argument("--hub_token", type=str, default=None, help="The token to use to push to the Model Hub.")
parser.add_argument("--api_key", default="", help="api key: set via env")
url = f"https://{user}:{password}@{host}/db"
db = "postgresql://%s:%s@%s/%s" % (user, pw, host, name)
assert hashlib.sha1(b"x").hexdigest() == "11f6ad8ec52a2984abaafd7c3b516503785c2072"
""",
    ".env.example": """\
HF_TOKEN=
WANDB_API_KEY=your-wandb-key
OPENAI_API_KEY=sk-...
DATABASE_URL=postgres://postgres:postgres@localhost:5432/app
REDIS_URL=redis://:password@redis:6379/0
SECRET_KEY=change-me-in-production
""",
    "README.md": """\
# Training

Set your token: `export HF_TOKEN=<your token>` or run `huggingface-cli login`.
The API key (`api_key:`) goes in the secret named `wandb-credentials`.
password: is read from the vault. Token: required.
Use `--token $HF_TOKEN` and never `--token hf_...`.
""",
}


@pytest.mark.parametrize("filename", sorted(NEGATIVES))
def test_realistic_near_misses_stay_quiet(filename: str) -> None:
    findings = lint_snippet(filename, NEGATIVES[filename], {"select": ["SPK2"]})
    assert [(finding.line, finding.rule, finding.message) for finding in findings] == []


def positives() -> dict[str, tuple[str, list[tuple[int, str]]]]:
    hf, wandb, password, secret = FAKE.hf(), FAKE.wandb(), FAKE.password(), FAKE.high_entropy(40)
    openai, anthropic, nvidia, aws_id, aws = FAKE.openai(), FAKE.anthropic(), FAKE.nvidia(), FAKE.aws_key_id(), \
        FAKE.aws_secret()
    script = (f"#!/bin/bash\nexport WANDB_API_KEY=\"{wandb}\"\nHF_TOKEN={hf} python train.py\n"
              f"docker login -u robot\\$ml+ci -p {password} harbor.example.org\n"
              f"curl -u admin:{password} https://nexus.example.org/repo\nwandb login {wandb}\n"
              f"docker build --build-arg HF_TOKEN={hf} -t x .\nhelm install x c --set auth.password={password}\n"
              f"mysql -u root -p{password} db\nsshpass -p '{password}' ssh user@host\n"
              f"kubectl create secret generic hf --from-literal=token={hf}\n")
    config = (f"mlflow:\n  tracking_password: {password}\ncomet:\n  api_key: {secret}\nwandb:\n  key: {wandb}\n"
              f"openai:\n  key: {openai}\ndb:\n  connection: \"Server=db;User Id=ml;Password={password};\"\n"
              f"gcp_api_key: {FAKE.google_api_key()}\n")
    code = (f"import openai, boto3\nopenai.api_key = \"{openai}\"\n"
            f"s = boto3.Session(aws_access_key_id=\"{aws_id}\", aws_secret_access_key=\"{aws}\")\n"
            f"client = Anthropic(api_key=\"{anthropic}\")\nNGC_API_KEY = \"{nvidia}\"\n"
            f"os.environ.setdefault(\"HF_TOKEN\", \"{hf}\")\n"
            f"requests.get(url, headers={{\"Authorization\": \"Bearer {secret}\"}})\n"
            f"requests.get(url, auth=(\"user\", \"{password}\"))\n")
    return {
        "launch.sh": (script, [(2, "SPK201"), (3, "SPK201")] + [(line, "SPK203") for line in range(4, 12)]),
        "conf.yaml": (config, [(2, "SPK201"), (4, "SPK201"), (6, "SPK201"), (8, "SPK201"), (10, "SPK201"),
                               (11, "SPK201")]),
        "client.py": (code, [(2, "SPK201"), (3, "SPK201"), (3, "SPK201"), (4, "SPK201"), (5, "SPK201"),
                             (6, "SPK201"), (7, "SPK201"), (8, "SPK201")]),
    }


@pytest.mark.parametrize("filename", ["launch.sh", "conf.yaml", "client.py"])
def test_realistic_leaks_are_found(filename: str) -> None:
    text, expected = positives()[filename]
    findings = lint_snippet(filename, text, {"select": ["SPK2"]})
    assert [(finding.line, finding.rule) for finding in findings] == expected
