"""The jetspark HTTP control plane (FastAPI)."""
