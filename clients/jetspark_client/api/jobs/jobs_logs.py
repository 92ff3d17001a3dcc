from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.log_page import LogPage
from ...models.problem_detail import ProblemDetail
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    job_id: UUID,
    *,
    from_: int | Unset = 0,
    size: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["from"] = from_

    params["size"] = size


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/jobs/{job_id}/logs".format(job_id=quote(str(job_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> LogPage | ProblemDetail | None:
    if response.status_code == 200:
        response_200 = LogPage.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = ProblemDetail.from_dict(response.json())



        return response_401

    if response.status_code == 404:
        response_404 = ProblemDetail.from_dict(response.json())



        return response_404

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[LogPage | ProblemDetail]:
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
    from_: int | Unset = 0,
    size: int | Unset = 100,

) -> Response[LogPage | ProblemDetail]:
    """ Job Logs

     The job's log lines from line ``from`` (0: its first), at most ``size`` of them.

    Args:
        job_id (UUID):
        from_ (int | Unset):  Default: 0.
        size (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LogPage | ProblemDetail]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
from_=from_,
size=size,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = 0,
    size: int | Unset = 100,

) -> LogPage | ProblemDetail | None:
    """ Job Logs

     The job's log lines from line ``from`` (0: its first), at most ``size`` of them.

    Args:
        job_id (UUID):
        from_ (int | Unset):  Default: 0.
        size (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LogPage | ProblemDetail
     """


    return sync_detailed(
        job_id=job_id,
client=client,
from_=from_,
size=size,

    ).parsed

async def asyncio_detailed(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = 0,
    size: int | Unset = 100,

) -> Response[LogPage | ProblemDetail]:
    """ Job Logs

     The job's log lines from line ``from`` (0: its first), at most ``size`` of them.

    Args:
        job_id (UUID):
        from_ (int | Unset):  Default: 0.
        size (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LogPage | ProblemDetail]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
from_=from_,
size=size,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = 0,
    size: int | Unset = 100,

) -> LogPage | ProblemDetail | None:
    """ Job Logs

     The job's log lines from line ``from`` (0: its first), at most ``size`` of them.

    Args:
        job_id (UUID):
        from_ (int | Unset):  Default: 0.
        size (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LogPage | ProblemDetail
     """


    return (await asyncio_detailed(
        job_id=job_id,
client=client,
from_=from_,
size=size,

    )).parsed
