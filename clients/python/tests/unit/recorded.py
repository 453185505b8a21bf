"""A fake transport replaying recorded answers of the service, and recording the requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson

from cybercom import Client
from cybercom.retry import RetryPolicy

Handler = Callable[[httpx.Request], httpx.Response]


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(
        status, content=orjson.dumps(body), headers={"content-type": "application/json", **(headers or {})}
    )


def error_response(
    status: int, code: str, message: str, detail: Any = None, **headers: str
) -> httpx.Response:
    error: dict[str, Any] = {"status": status, "code": code, "message": message}
    if detail is not None:
        error["detail"] = detail
    return json_response(status, {"error": error}, {k.replace("_", "-"): v for k, v in headers.items()})


def envelope(results: list[Any], page: int, pages: int, page_size: int, count: int) -> dict[str, Any]:
    return {
        "count": count,
        "meta": {"page": page, "page_size": page_size, "pages": pages},
        "next": None if page >= pages else f"http://api.test/x?page={page + 1}",
        "previous": None if page <= 1 else f"http://api.test/x?page={page - 1}",
        "results": results,
    }


class Recorder:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)


def make_client(handler: Handler, **kwargs: Any) -> tuple[Client, Recorder]:
    recorder = Recorder(handler)
    kwargs.setdefault("token", "k")
    kwargs.setdefault("retry", RetryPolicy(attempts=3, base_delay=0.0))
    client = Client("http://api.test", transport=httpx.MockTransport(recorder), **kwargs)
    client._session._sleep = lambda _s: None
    return client, recorder


def body_of(request: httpx.Request) -> Any:
    return orjson.loads(request.content)
