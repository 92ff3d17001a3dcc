"""Bearer tokens guard every route but the health checks; each token stands for a principal."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param

from api.problems import Problem
from jetspark.tenants.principals import Principal, PrincipalDirectory

bearer = HTTPBearer(
    auto_error=False,
    description="A token from JETSPARK_API_TOKENS or JETSPARK_API_PRINCIPALS",
)
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="jetspark"'}


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value (the scheme in any case),
    exactly as FastAPI's ``HTTPBearer`` reads it, so the rate limit and the routes agree on
    who a request is."""
    scheme, token = get_authorization_scheme_param(authorization)
    return token if scheme.lower() == "bearer" and token else None


def authenticated(request: Request) -> Principal | None:
    """Who the request's bearer token stands for, or None; checked once per request (the
    rate limit may have checked it already)."""
    cached: Principal | None = request.scope.get("state", {}).get("principal")
    if cached is not None:
        return cached
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        return None
    directory: PrincipalDirectory = request.app.state.principals
    principal = directory.authenticate(token)
    if principal is not None:
        request.state.principal = principal
    return principal


async def require_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    """Who the request comes from; 401 without a known token."""
    if credentials is None:
        raise Problem(401, "send Authorization: Bearer <token>", headers=CHALLENGE)
    principal = authenticated(request)
    if principal is None:
        raise Problem(401, "the bearer token is not valid", headers=CHALLENGE)
    return principal
