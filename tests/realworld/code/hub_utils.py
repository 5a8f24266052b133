"""Helpers to fetch pinned model revisions and publish results."""

import os

from huggingface_hub import HfApi
from huggingface_hub import snapshot_download

BASE_MODEL = "meta-llama/Meta-Llama-3-8B"
BASE_REVISION = "e83c5163316f89bfbde7d9ab23ca2e25604af290"
DATASET_SHA256 = "deb9f0c6df60cd8b01273234e3b06ee99f68c99a329c119f7bbac639bcf39d59"
RUN_UUID = "7f3e9a52-1c4b-4d8e-9f6a-2b1c3d4e5f60"
DEFAULT_PASSWORD = "changeme"
OPENAI_API_KEY = "sk-proj-iiw1QGquFSW6d178WlGQpQm8DiCSnWP2K0gM4V19Aj0Q8B47"  # expect: SPK201


def client() -> HfApi:
    return HfApi(token=os.environ.get("HF_TOKEN"))


def fetch_base(cache_dir: str = "/dev/shm/hf") -> str:
    return snapshot_download(BASE_MODEL, revision=BASE_REVISION, cache_dir=cache_dir,
                             token=os.environ["HF_TOKEN"])


def auth_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
