"""The smoke test's restore check inside Lightning's and Hugging Face's own resume.

``spikelint.smoke.integrations.lightning.ResumeCheck`` and
``spikelint.smoke.integrations.hf.ResumeCheckCallback`` record digests of the whole live
training state during an uninterrupted run and compare a run resumed from a checkpoint with
them, step for step, naming the first piece that differs. Nothing here is imported by
``spikelint`` itself; each module imports its framework (and torch) only when it is used.
"""
