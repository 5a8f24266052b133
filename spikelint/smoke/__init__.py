"""``spikelint smoke``: prove on the target machine that a training job resumes bit for bit.

Nothing here imports ``torch`` at module import time except the modules that only the smoke
run itself loads (after ``cli`` has parsed the options and found torch).
"""
