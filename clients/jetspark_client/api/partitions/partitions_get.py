from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.partition_view import PartitionView
from ...models.partitions_get_key_type import PartitionsGetKeyType
from ...models.problem_detail import ProblemDetail
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    key: str,
    key_type: PartitionsGetKeyType | Unset = PartitionsGetKeyType.STRING,
    partition_count: int | Unset = 271,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["key"] = key

    json_key_type: str | Unset = UNSET
    if not isinstance(key_type, Unset):
        json_key_type = key_type.value

    params["key_type"] = json_key_type

    params["partition_count"] = partition_count


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/partitions",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PartitionView | ProblemDetail | None:
    if response.status_code == 200:
        response_200 = PartitionView.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PartitionView | ProblemDetail]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    key: str,
    key_type: PartitionsGetKeyType | Unset = PartitionsGetKeyType.STRING,
    partition_count: int | Unset = 271,

) -> Response[PartitionView | ProblemDetail]:
    """ Get Partition

     The partition id of ``key`` (a string, an integer with ``key_type=int`` or a JSON
    value) and where that partition's snapshot state lives: its Redis hash tag and, on a
    Redis Cluster, the slot and the primary and replicas serving it now.

    Args:
        key (str):
        key_type (PartitionsGetKeyType | Unset):  Default: PartitionsGetKeyType.STRING.
        partition_count (int | Unset):  Default: 271.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PartitionView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        key=key,
key_type=key_type,
partition_count=partition_count,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    key: str,
    key_type: PartitionsGetKeyType | Unset = PartitionsGetKeyType.STRING,
    partition_count: int | Unset = 271,

) -> PartitionView | ProblemDetail | None:
    """ Get Partition

     The partition id of ``key`` (a string, an integer with ``key_type=int`` or a JSON
    value) and where that partition's snapshot state lives: its Redis hash tag and, on a
    Redis Cluster, the slot and the primary and replicas serving it now.

    Args:
        key (str):
        key_type (PartitionsGetKeyType | Unset):  Default: PartitionsGetKeyType.STRING.
        partition_count (int | Unset):  Default: 271.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PartitionView | ProblemDetail
     """


    return sync_detailed(
        client=client,
key=key,
key_type=key_type,
partition_count=partition_count,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    key: str,
    key_type: PartitionsGetKeyType | Unset = PartitionsGetKeyType.STRING,
    partition_count: int | Unset = 271,

) -> Response[PartitionView | ProblemDetail]:
    """ Get Partition

     The partition id of ``key`` (a string, an integer with ``key_type=int`` or a JSON
    value) and where that partition's snapshot state lives: its Redis hash tag and, on a
    Redis Cluster, the slot and the primary and replicas serving it now.

    Args:
        key (str):
        key_type (PartitionsGetKeyType | Unset):  Default: PartitionsGetKeyType.STRING.
        partition_count (int | Unset):  Default: 271.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PartitionView | ProblemDetail]
     """


    kwargs = _get_kwargs(
        key=key,
key_type=key_type,
partition_count=partition_count,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    key: str,
    key_type: PartitionsGetKeyType | Unset = PartitionsGetKeyType.STRING,
    partition_count: int | Unset = 271,

) -> PartitionView | ProblemDetail | None:
    """ Get Partition

     The partition id of ``key`` (a string, an integer with ``key_type=int`` or a JSON
    value) and where that partition's snapshot state lives: its Redis hash tag and, on a
    Redis Cluster, the slot and the primary and replicas serving it now.

    Args:
        key (str):
        key_type (PartitionsGetKeyType | Unset):  Default: PartitionsGetKeyType.STRING.
        partition_count (int | Unset):  Default: 271.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PartitionView | ProblemDetail
     """


    return (await asyncio_detailed(
        client=client,
key=key,
key_type=key_type,
partition_count=partition_count,

    )).parsed
