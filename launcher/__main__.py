"""``python -m launcher``: how ``jetspark up`` starts its children with this interpreter."""

from launcher.entry import main

main()
