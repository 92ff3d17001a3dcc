from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job_spec import JobSpec
from ...models.problem_detail import ProblemDetail
from ...models.validation_report import ValidationReport
from typing import cast



def _get_kwargs(
    *,
    body: JobSpec,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/dags:validate",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ProblemDetail | ValidationReport | None:
    if response.status_code == 200:
        response_200 = ValidationReport.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ProblemDetail | ValidationReport]:
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

) -> Response[ProblemDetail | ValidationReport]:
    """ Validate Dag

     Check a job body as ``POST /v1/jobs`` does (``jetspark.jobs.accept``: the same checks
    in the same order); 200 with the plan, or the same 422 (or 409 for a snapshot it cannot
    start from).

    Args:
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ProblemDetail | ValidationReport]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: JobSpec,

) -> ProblemDetail | ValidationReport | None:
    """ Validate Dag

     Check a job body as ``POST /v1/jobs`` does (``jetspark.jobs.accept``: the same checks
    in the same order); 200 with the plan, or the same 422 (or 409 for a snapshot it cannot
    start from).

    Args:
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ProblemDetail | ValidationReport
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: JobSpec,

) -> Response[ProblemDetail | ValidationReport]:
    """ Validate Dag

     Check a job body as ``POST /v1/jobs`` does (``jetspark.jobs.accept``: the same checks
    in the same order); 200 with the plan, or the same 422 (or 409 for a snapshot it cannot
    start from).

    Args:
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ProblemDetail | ValidationReport]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: JobSpec,

) -> ProblemDetail | ValidationReport | None:
    """ Validate Dag

     Check a job body as ``POST /v1/jobs`` does (``jetspark.jobs.accept``: the same checks
    in the same order); 200 with the plan, or the same 422 (or 409 for a snapshot it cannot
    start from).

    Args:
        body (JobSpec): The body of ``POST /v1/jobs``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ProblemDetail | ValidationReport
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
