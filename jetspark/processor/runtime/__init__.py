"""Drives processors: the tasklet state machine, apart from the public processor API."""
