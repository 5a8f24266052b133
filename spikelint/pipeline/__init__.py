"""The engine's findings pipeline: suppressions, fingerprints, masking, the result cache, workers."""
