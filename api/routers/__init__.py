"""Routers only route: they parse, call a service function and shape the response."""
