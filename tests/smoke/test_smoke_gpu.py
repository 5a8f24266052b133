"""The CUDA-side helpers that can be tested without a GPU: parsing, summaries, fallbacks."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from spikelint.smoke import gpu
from spikelint.smoke.gpu import GpuSample
from spikelint.smoke.gpu import NOT_AVAILABLE
from spikelint.smoke.gpu import NoSampler
from spikelint.smoke.gpu import parse_nvidia_smi_inventory
from spikelint.smoke.gpu import parse_nvidia_smi_samples
from spikelint.smoke.gpu import query_inventory
from spikelint.smoke.gpu import start_sampler
from spikelint.smoke.gpu import summarise_samples

LOOP_OUTPUT = """\
0, 0, 512
1, [N/A], 0

0, 87, 20480
0, 100, 20490
0, 9"""


def test_nvidia_smi_loop_output_is_parsed_skipping_unsupported_values() -> None:
    samples = parse_nvidia_smi_samples(LOOP_OUTPUT)
    assert samples[:3] == [GpuSample(0, 0.0, 512.0), GpuSample(0, 87.0, 20480.0), GpuSample(0, 100.0, 20490.0)]
    assert samples[3] == GpuSample(0, 9.0, None)  # a line cut short when the sampler stopped


def test_utilisation_summary() -> None:
    summary = summarise_samples(parse_nvidia_smi_samples(LOOP_OUTPUT), "nvidia-smi")
    assert summary == {"source": "nvidia-smi", "samples": 4, "mean_percent": 49.0, "max_percent": 100.0}
    assert summarise_samples([], "nvml") == NOT_AVAILABLE


def test_inventory_names_driver_and_devices() -> None:
    inventory = parse_nvidia_smi_inventory("550.54.15, NVIDIA H100 80GB HBM3\n550.54.15, NVIDIA H100 80GB HBM3\n")
    assert inventory is not None
    assert inventory.driver_version == "550.54.15" and len(inventory.names) == 2
    assert parse_nvidia_smi_inventory("") is None


def test_query_inventory_runs_nvidia_smi_when_present(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake_run(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        return subprocess.CompletedProcess(command, 0, stdout="535.1, NVIDIA A100-SXM4-40GB\n", stderr="")

    monkeypatch.setattr(gpu.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    inventory = query_inventory(run=fake_run)
    assert inventory is not None and inventory.names == ["NVIDIA A100-SXM4-40GB"]
    assert calls and calls[0][0] == "nvidia-smi"


def test_no_sampling_on_a_cpu_run(tmp_path: Path) -> None:
    sampler = start_sampler("cpu", tmp_path / "gpu.csv")
    assert isinstance(sampler, NoSampler) and sampler.stop() == NOT_AVAILABLE


def test_a_cuda_run_without_nvidia_smi_or_nvml_reports_not_available(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gpu.shutil, "which", lambda name: None)
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)
    assert start_sampler("cuda", tmp_path / "gpu.csv").stop() == NOT_AVAILABLE
