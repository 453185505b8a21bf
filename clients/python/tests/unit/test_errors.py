import orjson
import pytest

from cybercom import errors as e


def body(status: int, code: str, message: str = "m", detail: object = None) -> bytes:
    error: dict[str, object] = {"status": status, "code": code, "message": message}
    if detail is not None:
        error["detail"] = detail
    return orjson.dumps({"error": error})


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "invalid_query", e.InvalidQuery),
        (400, "invalid_pipeline", e.InvalidQuery),
        (400, "unknown_parameter", e.InvalidQuery),
        (400, "invalid_name", e.InvalidName),
        (400, "reserved_name", e.InvalidName),
        (400, "invalid_body", e.BadRequest),
        (401, "not_authenticated", e.AuthenticationFailed),
        (401, "token_not_valid", e.AuthenticationFailed),
        (403, "permission_denied", e.PermissionDenied),
        (403, "csrf_failed", e.PermissionDenied),
        (404, "no_such_database", e.NotFound),
        (405, "method_not_allowed", e.MethodNotAllowed),
        (409, "duplicate_key", e.Conflict),
        (409, "collection_exists", e.Conflict),
        (413, "payload_too_large", e.PayloadTooLarge),
        (414, "query_too_long", e.QueryTooLong),
        (415, "unsupported_media_type", e.UnsupportedMediaType),
        (429, "too_many_heavy_queries", e.Throttled),
        (503, "query_timeout", e.QueryTimeout),
        (503, "database_unavailable", e.ServiceUnavailable),
        (500, "server_error", e.ServerError),
        (502, "http_502", e.ServerError),
        # A code known for another status does not override the status.
        (503, "invalid_query", e.ServiceUnavailable),
    ],
)
def test_class_by_code_then_status(status: int, code: str, cls: type[e.CybercomError]) -> None:
    error = e.error_from_response(status, body(status, code, "why"), {})
    assert type(error) is cls
    assert isinstance(error, e.CybercomError)
    assert (error.status, error.code, error.message) == (status, code, "why")


def test_detail_and_retry_after_are_kept() -> None:
    error = e.error_from_response(429, body(429, "throttled", "slow down", {"x": 1}), {"retry-after": "7"})
    assert isinstance(error, e.Throttled)
    assert error.retry_after == 7.0
    assert error.detail == {"x": 1}
    assert str(error) == "429 throttled: slow down"


def test_a_non_json_answer_still_becomes_an_error_with_its_text() -> None:
    error = e.error_from_response(502, b"<html>Bad Gateway</html>", {})
    assert type(error) is e.ServerError
    assert error.code == "http_502"
    assert "Bad Gateway" in error.message


@pytest.mark.parametrize(
    ("header", "seconds"), [("3", 3.0), (" 1.5 ", 1.5), ("-2", 0.0), ("soon", None), (None, None)]
)
def test_parse_retry_after(header: str | None, seconds: float | None) -> None:
    assert e.parse_retry_after(header) == seconds
