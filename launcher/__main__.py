"""``python -m launcher``: how ``jetspark up`` starts its children with this interpreter."""

from launcher.main import app

app(prog_name="jetspark")
