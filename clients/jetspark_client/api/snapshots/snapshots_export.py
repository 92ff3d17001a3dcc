from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.export_request import ExportRequest
from ...models.problem_detail import ProblemDetail
from ...models.snapshot_view import SnapshotView
from typing import cast
from uuid import UUID



def _get_kwargs(
    job_id: UUID,
    *,
    body: ExportRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs/{job_id}/snapshots".format(job_id=quote(str(job_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ProblemDetail | SnapshotView | None:
    if response.status_code == 201:
        response_201 = SnapshotView.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ProblemDetail | SnapshotView]:
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
    body: ExportRequest,

) -> Response[ProblemDetail | SnapshotView]:
    """ Export Snapshot

     Export the job's latest committed snapshot under ``name`` (it then outlives the job);
    a new job starts from it with ``config.initial_snapshot``. 409 when the job has none yet
    or the name is taken.

    Args:
        job_id (UUID):
        body (ExportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ProblemDetail | SnapshotView]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    body: ExportRequest,

) -> ProblemDetail | SnapshotView | None:
    """ Export Snapshot

     Export the job's latest committed snapshot under ``name`` (it then outlives the job);
    a new job starts from it with ``config.initial_snapshot``. 409 when the job has none yet
    or the name is taken.

    Args:
        job_id (UUID):
        body (ExportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ProblemDetail | SnapshotView
     """


    return sync_detailed(
        job_id=job_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    body: ExportRequest,

) -> Response[ProblemDetail | SnapshotView]:
    """ Export Snapshot

     Export the job's latest committed snapshot under ``name`` (it then outlives the job);
    a new job starts from it with ``config.initial_snapshot``. 409 when the job has none yet
    or the name is taken.

    Args:
        job_id (UUID):
        body (ExportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ProblemDetail | SnapshotView]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    body: ExportRequest,

) -> ProblemDetail | SnapshotView | None:
    """ Export Snapshot

     Export the job's latest committed snapshot under ``name`` (it then outlives the job);
    a new job starts from it with ``config.initial_snapshot``. 409 when the job has none yet
    or the name is taken.

    Args:
        job_id (UUID):
        body (ExportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ProblemDetail | SnapshotView
     """


    return (await asyncio_detailed(
        job_id=job_id,
client=client,
body=body,

    )).parsed
