"""``python -m jetspark.cli``: how ``jetspark up`` starts its children with this interpreter."""

from jetspark.cli.main import app

app(prog_name="jetspark")
