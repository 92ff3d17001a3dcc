"""Clients generated from openapi/openapi.json (``make client``)."""
