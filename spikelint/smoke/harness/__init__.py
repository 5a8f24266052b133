"""The built-in job protocol (``--job MODULE:FACTORY``): forked training processes that report every step,
checkpoint and live state on a line protocol, the interruptions, and the verdict per variant from what they reported."""
