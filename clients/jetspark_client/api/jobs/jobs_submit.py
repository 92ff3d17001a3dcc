from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job_spec import JobSpec
from ...models.job_view import JobView
from ...models.problem_detail import ProblemDetail
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["idempotency-key"] = idempotency_key



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> JobView | ProblemDetail | None:
    if response.status_code == 200:
        response_200 = JobView.from_dict(response.json())



        return response_200

    if response.status_code == 201:
        response_201 = JobView.from_dict(response.json())



        return response_201

    if response.status_code == 401:
        response_401 = ProblemDetail.from_dict(response.json())



        return response_401

    if response.status_code == 404:
        response_404 = ProblemDetail.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = ProblemDetail.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = ProblemDetail.from_dict(response.json())



        return response_413

    if response.status_code == 422:
        response_422 = ProblemDetail.from_dict(response.json())



        return response_422

    if response.status_code == 429:
        response_429 = ProblemDetail.from_dict(response.json())



        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[JobView | ProblemDetail]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[JobView | ProblemDetail]:
    """ Submit Job

     Validate and queue a DAG. The same Idempotency-Key and body return the same job
    (keys are per principal). 429 when the principal has its quota of queued jobs; 422
    naming each ``config.notify`` URL the server's webhook rules refuse.

    Args:
        idempotency_key (None | str | Unset):
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,

) -> JobView | ProblemDetail | None:
    """ Submit Job

     Validate and queue a DAG. The same Idempotency-Key and body return the same job
    (keys are per principal). 429 when the principal has its quota of queued jobs; 422
    naming each ``config.notify`` URL the server's webhook rules refuse.

    Args:
        idempotency_key (None | str | Unset):
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobView | ProblemDetail
     """


    return sync_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[JobView | ProblemDetail]:
    """ Submit Job

     Validate and queue a DAG. The same Idempotency-Key and body return the same job
    (keys are per principal). 429 when the principal has its quota of queued jobs; 422
    naming each ``config.notify`` URL the server's webhook rules refuse.

    Args:
        idempotency_key (None | str | Unset):
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,

) -> JobView | ProblemDetail | None:
    """ Submit Job

     Validate and queue a DAG. The same Idempotency-Key and body return the same job
    (keys are per principal). 429 when the principal has its quota of queued jobs; 422
    naming each ``config.notify`` URL the server's webhook rules refuse.

    Args:
        idempotency_key (None | str | Unset):
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobView | ProblemDetail
     """


    return (await asyncio_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,

    )).parsed
