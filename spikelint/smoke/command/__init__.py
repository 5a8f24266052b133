"""The ``--cmd`` driver: the team's own command run, killed and resumed as a scheduler would, and the verdict
read from what it printed and the files it wrote."""
