"""Bearer tokens from ``JETSPARK_API_TOKENS`` guard every route but the health checks."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.problems import Problem

bearer = HTTPBearer(auto_error=False, description="A token from JETSPARK_API_TOKENS")


async def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    tokens: list[str] = request.app.state.api_settings.tokens
    challenge = {"WWW-Authenticate": 'Bearer realm="jetspark"'}
    if credentials is None:
        raise Problem(401, "send Authorization: Bearer <token>", headers=challenge)
    given = credentials.credentials.encode()
    if not any(hmac.compare_digest(given, token.encode()) for token in tokens):
        raise Problem(401, "the bearer token is not valid", headers=challenge)
    return credentials.credentials
