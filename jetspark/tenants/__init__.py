"""Tenants: who a token is (principals), what they own, and how much they may use at once."""
