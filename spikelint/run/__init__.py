"""The run contract: launch precheck, run manifests and run-folder verification."""
