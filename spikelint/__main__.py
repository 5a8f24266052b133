from spikelint.cli import run

run()
