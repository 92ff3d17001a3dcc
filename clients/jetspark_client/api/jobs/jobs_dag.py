from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.dag_view import DagView
from ...models.jobs_dag_format_type_0 import JobsDagFormatType0
from ...models.problem_detail import ProblemDetail
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    job_id: UUID,
    *,
    format_: JobsDagFormatType0 | None | Unset = UNSET,
    accept: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(accept, Unset):
        headers["accept"] = accept



    

    params: dict[str, Any] = {}

    json_format_: None | str | Unset
    if isinstance(format_, Unset):
        json_format_ = UNSET
    elif isinstance(format_, JobsDagFormatType0):
        json_format_ = format_.value
    else:
        json_format_ = format_
    params["format"] = json_format_


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/jobs/{job_id}/dag".format(job_id=quote(str(job_id), safe=""),),
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DagView | ProblemDetail | None:
    if response.status_code == 200:
        response_200 = DagView.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DagView | ProblemDetail]:
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
    format_: JobsDagFormatType0 | None | Unset = UNSET,
    accept: None | str | Unset = UNSET,

) -> Response[DagView | ProblemDetail]:
    """ Job Dag

     The DAG as planned. ``?format=svg`` or ``Accept: image/svg+xml`` draws it.

    Args:
        job_id (UUID):
        format_ (JobsDagFormatType0 | None | Unset):
        accept (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DagView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
format_=format_,
accept=accept,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    format_: JobsDagFormatType0 | None | Unset = UNSET,
    accept: None | str | Unset = UNSET,

) -> DagView | ProblemDetail | None:
    """ Job Dag

     The DAG as planned. ``?format=svg`` or ``Accept: image/svg+xml`` draws it.

    Args:
        job_id (UUID):
        format_ (JobsDagFormatType0 | None | Unset):
        accept (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DagView | ProblemDetail
     """


    return sync_detailed(
        job_id=job_id,
client=client,
format_=format_,
accept=accept,

    ).parsed

async def asyncio_detailed(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    format_: JobsDagFormatType0 | None | Unset = UNSET,
    accept: None | str | Unset = UNSET,

) -> Response[DagView | ProblemDetail]:
    """ Job Dag

     The DAG as planned. ``?format=svg`` or ``Accept: image/svg+xml`` draws it.

    Args:
        job_id (UUID):
        format_ (JobsDagFormatType0 | None | Unset):
        accept (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DagView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
format_=format_,
accept=accept,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    format_: JobsDagFormatType0 | None | Unset = UNSET,
    accept: None | str | Unset = UNSET,

) -> DagView | ProblemDetail | None:
    """ Job Dag

     The DAG as planned. ``?format=svg`` or ``Accept: image/svg+xml`` draws it.

    Args:
        job_id (UUID):
        format_ (JobsDagFormatType0 | None | Unset):
        accept (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DagView | ProblemDetail
     """


    return (await asyncio_detailed(
        job_id=job_id,
client=client,
format_=format_,
accept=accept,

    )).parsed
