"""SPK403 on training code: what counts as a training checkpoint, and what it must hold."""

from __future__ import annotations

import pytest

from tests.workload_rules.conftest import lint
from tests.workload_rules.conftest import pairs


def spk403(code: str) -> set[tuple[int, str]]:
    return pairs(lint("trainer/loop.py", code))


@pytest.mark.parametrize("code", [
    "import torch as T\ndef f(model, opt, step, p):\n    T.save({'model': model.state_dict(), 'opt': opt.state_dict()}, p)\n",
    "from torch import save\nsave({'model': m.state_dict()}, 'x.pt')\n",
    "import torch\ntorch.save(obj={'net': net.module.state_dict(), 'epoch': 1}, f='x.pt')\n",
    "import torch\ndef f(m, p):\n    c = dict(model=m.state_dict())\n    c['global_step'] = 3\n    torch.save(c, p)\n",
])
def test_incomplete_checkpoints(code: str) -> None:
    lines = {line for line, rule in spk403(code) if rule == "SPK403"}
    assert len(lines) == 1


@pytest.mark.parametrize("code", [
    # complete: optimizer and step; no scheduler in the function
    "import torch\ndef f(m, o, step, p):\n    torch.save({'model': m.state_dict(), 'optimizer': o.state_dict(), 'step': step}, p)\n",
    # a bare state_dict is an export, not a dict literal
    "import torch\ntorch.save(model.state_dict(), 'final.pt')\n",
    # not a training checkpoint: no module state_dict()
    "import torch\ntorch.save({'losses': losses, 'epoch': 3}, 'metrics.pt')\n",
    # the name is rebound to something that is not a dict literal before the save
    "import torch\ndef f(m, p):\n    s = {'model': m.state_dict()}\n    s = build_state(m)\n    torch.save(s, p)\n",
    # accelerate's own full-state save is not a dict literal
    "def f(accelerator, d):\n    accelerator.save_state(d)\n",
])
def test_complete_or_unrelated_saves(code: str) -> None:
    assert spk403(code) == set()


def test_scheduler_is_required_only_when_the_function_has_one() -> None:
    with_scheduler = ("import torch\ndef f(m, o, step, p):\n    sched = torch.optim.lr_scheduler.StepLR(o, 10)\n"
                      "    torch.save({'model': m.state_dict(), 'optimizer': o.state_dict(), 'step': step}, p)\n")
    findings = lint("trainer/loop.py", with_scheduler)
    assert [(f.line, f.rule) for f in findings] == [(4, "SPK403")]
    assert "LR scheduler" in findings[0].message and "optimizer state" not in findings[0].message


def test_finding_points_at_the_saved_object() -> None:
    code = "import torch\ndef f(m, p):\n    state = {'model': m.state_dict()}\n    torch.save(state, p)\n"
    finding = lint("trainer/loop.py", code)[0]
    assert (finding.line, finding.column) == (4, len("    torch.save(") + 1)
