"""Facts derived from documents and workloads (run settings, written paths, image references).

Adapters and checks both ask these questions, so they sit between the documents and the checks.
"""
