"""The shared DAG model: what users submit (SPEC §3), how it is checked, how it is planned."""
