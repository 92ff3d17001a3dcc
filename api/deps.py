"""Dependencies as Annotated aliases, so route signatures read like prose."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import redis
from fastapi import Depends, Request
from sqlalchemy.orm import Session

from api.auth import require_token
from jetspark.queue.keys import Keys
from jetspark.settings import ApiSettings, DagLimits


def _session(request: Request) -> Iterator[Session]:
    with request.app.state.sessions() as session:
        yield session


def _redis(request: Request) -> redis.Redis:
    client: redis.Redis = request.app.state.redis
    return client


def _keys(request: Request) -> Keys:
    keys: Keys = request.app.state.keys
    return keys


def _api_settings(request: Request) -> ApiSettings:
    settings: ApiSettings = request.app.state.api_settings
    return settings


def _limits(request: Request) -> DagLimits:
    limits: DagLimits = request.app.state.dag_limits
    return limits


SessionDep = Annotated[Session, Depends(_session)]
RedisDep = Annotated[redis.Redis, Depends(_redis)]
KeysDep = Annotated[Keys, Depends(_keys)]
TokenDep = Annotated[str, Depends(require_token)]
ApiSettingsDep = Annotated[ApiSettings, Depends(_api_settings)]
LimitsDep = Annotated[DagLimits, Depends(_limits)]
