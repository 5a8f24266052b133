"""Checks of the secret rules (``rules/secrets.yaml``, SPK2xx): ``checks`` holds the checks, the other modules what they collect."""
