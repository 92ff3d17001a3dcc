from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job_page import JobPage
from ...models.job_status import JobStatus
from ...models.problem_detail import ProblemDetail
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    status: list[JobStatus] | None | Unset = UNSET,
    name: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_status: list[str] | None | Unset
    if isinstance(status, Unset):
        json_status = UNSET
    elif isinstance(status, list):
        json_status = []
        for status_type_0_item_data in status:
            status_type_0_item = status_type_0_item_data.value
            json_status.append(status_type_0_item)


    else:
        json_status = status
    params["status"] = json_status

    json_name: None | str | Unset
    if isinstance(name, Unset):
        json_name = UNSET
    else:
        json_name = name
    params["name"] = json_name

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/jobs",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> JobPage | ProblemDetail | None:
    if response.status_code == 200:
        response_200 = JobPage.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[JobPage | ProblemDetail]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    status: list[JobStatus] | None | Unset = UNSET,
    name: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> Response[JobPage | ProblemDetail]:
    """ List Jobs

     The principal's jobs (an admin's: everyone's), newest first, filtered by status
    (repeatable) and name, a page at a time.

    Args:
        status (list[JobStatus] | None | Unset):
        name (None | str | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobPage | ProblemDetail]
     """


    kwargs = _get_kwargs(
        status=status,
name=name,
limit=limit,
cursor=cursor,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    status: list[JobStatus] | None | Unset = UNSET,
    name: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> JobPage | ProblemDetail | None:
    """ List Jobs

     The principal's jobs (an admin's: everyone's), newest first, filtered by status
    (repeatable) and name, a page at a time.

    Args:
        status (list[JobStatus] | None | Unset):
        name (None | str | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobPage | ProblemDetail
     """


    return sync_detailed(
        client=client,
status=status,
name=name,
limit=limit,
cursor=cursor,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    status: list[JobStatus] | None | Unset = UNSET,
    name: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> Response[JobPage | ProblemDetail]:
    """ List Jobs

     The principal's jobs (an admin's: everyone's), newest first, filtered by status
    (repeatable) and name, a page at a time.

    Args:
        status (list[JobStatus] | None | Unset):
        name (None | str | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobPage | ProblemDetail]
     """


    kwargs = _get_kwargs(
        status=status,
name=name,
limit=limit,
cursor=cursor,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    status: list[JobStatus] | None | Unset = UNSET,
    name: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,

) -> JobPage | ProblemDetail | None:
    """ List Jobs

     The principal's jobs (an admin's: everyone's), newest first, filtered by status
    (repeatable) and name, a page at a time.

    Args:
        status (list[JobStatus] | None | Unset):
        name (None | str | Unset):
        limit (int | Unset):  Default: 50.
        cursor (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobPage | ProblemDetail
     """


    return (await asyncio_detailed(
        client=client,
status=status,
name=name,
limit=limit,
cursor=cursor,

    )).parsed
