"""Publish a finished run to the Hub (run by hand after review)."""

import subprocess

HF_TOKEN = "hf_eyjcnUuFzFt44ekXQzQPepyVSaid8m1iQR"  # expect: SPK201


def login() -> None:
    subprocess.run(["huggingface-cli", "login", "--token", HF_TOKEN], check=True)


def upload(folder: str, repo: str, revision: str = "3f9c2e1a7b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f") -> None:
    subprocess.run(["huggingface-cli", "upload", repo, folder, "--revision", revision], check=True)
