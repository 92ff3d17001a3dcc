from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job_view import JobView
from ...models.problem_detail import ProblemDetail
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    job_id: UUID,
    *,
    idempotency_key: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["idempotency-key"] = idempotency_key



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs/{job_id}/cancel".format(job_id=quote(str(job_id), safe=""),),
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> JobView | ProblemDetail | None:
    if response.status_code == 200:
        response_200 = JobView.from_dict(response.json())



        return response_200

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
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[JobView | ProblemDetail]:
    """ Cancel Job

     Cancel a job; a running one stops within a heartbeat. A cancelled job is answered as
    it is (200); 409 if it ended otherwise.

    Args:
        job_id (UUID):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
idempotency_key=idempotency_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,

) -> JobView | ProblemDetail | None:
    """ Cancel Job

     Cancel a job; a running one stops within a heartbeat. A cancelled job is answered as
    it is (200); 409 if it ended otherwise.

    Args:
        job_id (UUID):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobView | ProblemDetail
     """


    return sync_detailed(
        job_id=job_id,
client=client,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[JobView | ProblemDetail]:
    """ Cancel Job

     Cancel a job; a running one stops within a heartbeat. A cancelled job is answered as
    it is (200); 409 if it ended otherwise.

    Args:
        job_id (UUID):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
idempotency_key=idempotency_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,

) -> JobView | ProblemDetail | None:
    """ Cancel Job

     Cancel a job; a running one stops within a heartbeat. A cancelled job is answered as
    it is (200); 409 if it ended otherwise.

    Args:
        job_id (UUID):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobView | ProblemDetail
     """


    return (await asyncio_detailed(
        job_id=job_id,
client=client,
idempotency_key=idempotency_key,

    )).parsed
