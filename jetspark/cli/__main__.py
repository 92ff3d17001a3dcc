"""``python -m jetspark.cli``: the client commands (the servers' are ``python -m launcher``)."""

from jetspark.cli.main import app

app(prog_name="jetspark")
