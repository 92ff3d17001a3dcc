"""The jetspark worker: a long-lived PySpark driver that claims jobs and runs them."""
