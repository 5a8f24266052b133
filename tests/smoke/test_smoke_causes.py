"""The cause of a state difference named by the shape of what differs, not by a substring of its key."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from spikelint.smoke.compare.causes import DATA_POSITION
from spikelint.smoke.compare.causes import MODEL
from spikelint.smoke.compare.causes import OPTIMIZER
from spikelint.smoke.compare.causes import RNG
from spikelint.smoke.compare.causes import SCHEDULER
from spikelint.smoke.compare.causes import STEP_COUNTER
from spikelint.smoke.compare.causes import causes
from spikelint.smoke.compare.causes import describe_causes
from spikelint.smoke.compare.causes import group_of
from spikelint.smoke.compare.leaves import Difference


@pytest.mark.parametrize("key, detail, group", [
    ("opt.state.0.exp_avg", "torch.float32[16, 8]", OPTIMIZER),  # a key named "opt"
    ("optimizer_states.0.param_groups.0.lr", "float", OPTIMIZER),
    ("sched.last_epoch", "int", SCHEDULER),
    ("lr_schedulers.0._step_count", "int", SCHEDULER),
    ("generator_state", "reference torch.uint8[5056] sha256:ab", RNG),
    ("rng.python", "str", RNG),
    ("loader_generator", "torch.uint8[5056]", DATA_POSITION),
    ("sampler.position", "int", DATA_POSITION),
    ("global_step", "int", STEP_COUNTER),
    ("model.0.weight", "torch.float32[16, 8]", MODEL),
    ("optimizer_name", "str", MODEL),  # a substring is no optimizer state
    ("app.optim.state.net1.weight.exp_avg_sq", "torch.float32[16, 8]", OPTIMIZER),  # DCP: keyed by parameter name
    ("app.optim.state.net1.bias.step", "torch.float32[]", OPTIMIZER),
    ("app.model.net1.weight", "torch.float32[16, 8]", MODEL),
])
def test_each_leaf_lands_in_its_group(key: str, detail: str, group: str) -> None:
    assert group_of(key, detail) == group


def test_the_first_file_names_the_groups_and_counters_off_by_the_resume_step() -> None:
    differences = [
        ("step-28.pt", Difference("model.0.weight", "value", 0.01, "torch.float32[4]")),
        ("step-28.pt", Difference("opt.state.0.step", "value", 24.0, "torch.float32[]")),
        ("step-28.pt", Difference("sched.last_epoch", "value", 24.0, "int")),
        ("step-32.pt", Difference("rng.torch", "value", None, "torch.uint8[5056]")),
    ]
    found = causes(differences, resume_step=24)
    # counters off by the resume step first, then causes before consequences; RNG differs only in a later file
    assert [cause.group for cause in found] == [SCHEDULER, OPTIMIZER, MODEL]
    text = describe_causes(found, 24)
    assert text.startswith("state differs in the first checkpoint the resumed run wrote (step-28.pt): scheduler")
    assert "the optimizer restarted at 0" in text and "sched.last_epoch is off by 24, the resume step" in text
