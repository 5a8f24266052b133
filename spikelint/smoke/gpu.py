"""GPU facts the parent can learn without initialising CUDA: driver, names, utilisation.

Utilisation is sampled during the run by ``nvidia-smi`` in loop mode (a separate process
writing CSV to a file, so the parent needs no thread), or by polling NVML from the
parent's wait loop when only ``pynvml`` is there; otherwise it is "not available".
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any
from typing import Callable
from typing import NamedTuple
from typing import Protocol

NOT_AVAILABLE = "not available"
SAMPLE_INTERVAL_MS = 200


class GpuSample(NamedTuple):
    gpu: int
    utilisation_percent: float
    memory_used_mib: float | None


class GpuInventory(NamedTuple):
    driver_version: str
    names: list[str]


def _number(text: str) -> float | None:
    text = text.strip()
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]", ""
        return None


def parse_nvidia_smi_samples(text: str) -> list[GpuSample]:
    """Lines ``index, utilization.gpu, memory.used`` (``--format=csv,noheader,nounits``).

    Unsupported values, blank lines and a half-written last line are skipped.
    """
    samples: list[GpuSample] = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) < 2:
            continue
        index, utilisation = _number(fields[0]), _number(fields[1])
        if index is None or utilisation is None:
            continue
        memory = _number(fields[2]) if len(fields) > 2 else None
        samples.append(GpuSample(int(index), utilisation, memory))
    return samples


def parse_nvidia_smi_inventory(text: str) -> GpuInventory | None:
    """Lines ``driver_version, name``."""
    driver = ""
    names: list[str] = []
    for line in text.splitlines():
        if "," not in line:
            continue
        version, name = (part.strip() for part in line.split(",", 1))
        driver = driver or version
        names.append(name)
    return GpuInventory(driver, names) if names else None


def query_inventory(run: Callable[..., Any] = subprocess.run) -> GpuInventory | None:
    """Driver version and GPU names from nvidia-smi, else NVML, else ``None``."""
    if shutil.which("nvidia-smi"):
        try:
            completed = run(
                ["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=10,
            )
            if completed.returncode == 0:
                return parse_nvidia_smi_inventory(completed.stdout)
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            driver = pynvml.nvmlSystemGetDriverVersion()
            count = pynvml.nvmlDeviceGetCount()
            names = [pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i)) for i in range(count)]
        finally:
            pynvml.nvmlShutdown()
        as_text = [name.decode() if isinstance(name, bytes) else str(name) for name in names]
        return GpuInventory(driver.decode() if isinstance(driver, bytes) else str(driver), as_text)
    except Exception:  # noqa: BLE001 - not installed, no driver
        return None


def summarise_samples(samples: list[GpuSample], source: str) -> dict[str, Any] | str:
    if not samples:
        return NOT_AVAILABLE
    values = [sample.utilisation_percent for sample in samples]
    return {
        "source": source,
        "samples": len(values),
        "mean_percent": round(sum(values) / len(values), 1),
        "max_percent": max(values),
    }


class UtilisationSampler(Protocol):
    def poll(self) -> None: ...

    def stop(self) -> dict[str, Any] | str: ...


class NoSampler:
    def poll(self) -> None:
        return None

    def stop(self) -> dict[str, Any] | str:
        return NOT_AVAILABLE


class NvidiaSmiSampler:
    """``nvidia-smi -lms`` running beside the smoke run, writing CSV lines to a file."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self._handle = open(output, "w", encoding="utf-8")
        self._process = subprocess.Popen(
            [
                "nvidia-smi",
                "--query-gpu=index,utilization.gpu,memory.used",
                "--format=csv,noheader,nounits",
                f"-lms={SAMPLE_INTERVAL_MS}",
            ],
            stdout=self._handle,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )

    def poll(self) -> None:
        return None

    def stop(self) -> dict[str, Any] | str:
        self._process.terminate()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._handle.close()
        return summarise_samples(parse_nvidia_smi_samples(self.output.read_text(encoding="utf-8")), "nvidia-smi")


class NvmlSampler:
    """Polls NVML from the parent's wait loop (no thread, so forking stays safe)."""

    def __init__(self, pynvml: Any) -> None:
        self._nvml = pynvml
        pynvml.nvmlInit()
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        self._samples: list[GpuSample] = []
        self._last = 0.0

    def poll(self) -> None:
        now = time.monotonic()
        if now - self._last < SAMPLE_INTERVAL_MS / 1000:
            return
        self._last = now
        for index, handle in enumerate(self._handles):
            rates = self._nvml.nvmlDeviceGetUtilizationRates(handle)
            memory = self._nvml.nvmlDeviceGetMemoryInfo(handle)
            self._samples.append(GpuSample(index, float(rates.gpu), memory.used / 2**20))

    def stop(self) -> dict[str, Any] | str:
        try:
            self._nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - NVML shutting down badly does not change the samples taken
            pass
        return summarise_samples(self._samples, "nvml")


def start_sampler(device_type: str, output: Path) -> UtilisationSampler:
    """The best sampler this machine offers for a CUDA run; nothing on a CPU run."""
    if device_type != "cuda":
        return NoSampler()
    if shutil.which("nvidia-smi"):
        try:
            return NvidiaSmiSampler(output)
        except OSError:
            pass
    try:
        import pynvml

        return NvmlSampler(pynvml)
    except Exception:  # noqa: BLE001 - any NVML failure means no sampler, never a failed smoke run
        return NoSampler()
