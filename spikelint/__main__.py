import sys

from spikelint.cli import main

sys.exit(main())
