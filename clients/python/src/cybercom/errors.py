"""One exception hierarchy built from the API's error body.

Every error the service answers has the body ``{"error": {"status", "code", "message", "detail"?}}``.
:func:`error_from_response` turns it into an instance of the most specific class: first by ``code``
(``invalid_query`` -> :class:`InvalidQuery`), else by HTTP status (404 -> :class:`NotFound`).
"""

from __future__ import annotations

from typing import Any, Optional

import orjson


class CybercomError(Exception):
    """Base of every error this package raises for an answer of the service."""

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: str = "error",
        detail: Any = None,
        url: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.detail = detail
        self.url = url

    def __str__(self) -> str:
        prefix = f"{self.status} {self.code}: " if self.status is not None else ""
        return f"{prefix}{self.message}"


class BadRequest(CybercomError):
    """400: the request was refused as malformed."""


class InvalidQuery(BadRequest):
    """400: the filter, projection, sort, pipeline or parameters are not valid."""


class InvalidName(BadRequest):
    """400: a database, collection or field name is not allowed."""


class AuthenticationFailed(CybercomError):
    """401: no credentials, wrong credentials, or an expired or revoked token."""


class PermissionDenied(CybercomError):
    """403: signed in, but not allowed to do this."""


class NotFound(CybercomError):
    """404: no such database, collection, record, task or endpoint."""


class MethodNotAllowed(CybercomError):
    """405."""


class Conflict(CybercomError):
    """409: the database, collection or ``_id`` exists already."""


class PayloadTooLarge(CybercomError):
    """413: the request body is larger than the server accepts."""


class QueryTooLong(CybercomError):
    """414: a query parameter is longer than the server accepts."""


class UnsupportedMediaType(CybercomError):
    """415."""


class Throttled(CybercomError):
    """429: too many attempts or heavy queries; ``retry_after`` seconds say when to try again."""

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(CybercomError):
    """500 and other 5xx answers without a more specific class."""


class ServiceUnavailable(ServerError):
    """503: the database or broker is unavailable, busy, or a query ran out of time."""

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class QueryTimeout(ServiceUnavailable):
    """503 ``query_timeout``: the read used up the server's time budget."""


class ProtocolError(CybercomError):
    """The server answered something that is not the API's JSON (a proxy page, a cut-off stream)."""


class TaskFailed(CybercomError):
    """A task run ended in FAILURE or REVOKED; carries the task's exception type, message and traceback."""

    def __init__(
        self,
        message: str,
        *,
        task_id: str,
        exc_type: Optional[str],
        traceback: Optional[str],
        state: str = "FAILURE",
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.task_id = task_id
        self.exc_type = exc_type
        self.traceback = traceback
        self.state = state

    def __str__(self) -> str:
        return f"{self.exc_type or self.state}: {self.message} (task {self.task_id})"


class TaskTimeout(CybercomError):
    """``TaskRun.result(timeout=...)`` gave up before the task finished (the task keeps running)."""


_BY_CODE: dict[str, type[CybercomError]] = {
    "invalid_query": InvalidQuery,
    "invalid_pipeline": InvalidQuery,
    "invalid_projection": InvalidQuery,
    "invalid_sort": InvalidQuery,
    "invalid_distinct": InvalidQuery,
    "invalid_combination": InvalidQuery,
    "forbidden_operator": InvalidQuery,
    "forbidden_lookup": InvalidQuery,
    "cross_database_lookup": InvalidQuery,
    "malformed_json": InvalidQuery,
    "unknown_parameter": InvalidQuery,
    "repeated_parameter": InvalidQuery,
    "invalid_page": InvalidQuery,
    "invalid_page_size": InvalidQuery,
    "invalid_skip": InvalidQuery,
    "missing_filter": InvalidQuery,
    "too_deeply_nested": InvalidQuery,
    "invalid_name": InvalidName,
    "invalid_field_name": InvalidName,
    "reserved_name": InvalidName,
    "query_timeout": QueryTimeout,
}

_BY_STATUS: dict[int, type[CybercomError]] = {
    400: BadRequest,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    414: QueryTooLong,
    415: UnsupportedMediaType,
    429: Throttled,
    503: ServiceUnavailable,
}


def error_class(status: int, code: str) -> type[CybercomError]:
    """The class for an error answer: by ``code`` when known, else by status."""
    by_code = _BY_CODE.get(code)
    if by_code is not None and issubclass(by_code, _BY_STATUS.get(status, CybercomError)):
        return by_code
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    return BadRequest if 400 <= status < 500 else CybercomError


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a ``Retry-After`` header (delta-seconds; an HTTP date is not used by the API)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds)


def error_from_response(
    status: int, body: bytes, headers: Any = None, url: Optional[str] = None
) -> CybercomError:
    """Builds the exception for an error answer (``headers``: a mapping with ``.get``)."""
    code = f"http_{status}"
    message = f"HTTP {status}"
    detail: Any = None
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code", code))
        message = str(error.get("message", message))
        detail = error.get("detail")
    elif body:
        text = body[:300].decode("utf-8", "replace").strip()
        message = f"HTTP {status}: the answer is not the API's JSON error: {text}"
    cls = error_class(status, code)
    kwargs: dict[str, Any] = {"status": status, "code": code, "detail": detail, "url": url}
    if issubclass(cls, (Throttled, ServiceUnavailable)):
        kwargs["retry_after"] = parse_retry_after(headers.get("retry-after") if headers is not None else None)
    return cls(message, **kwargs)
