"""Job lifecycle: statuses, the orchestration rules that move between them, and job storage."""
