import httpx
import pytest

from cybercom import errors as e
from cybercom.retry import RetryPolicy, nothing_written

from .recorded import error_response, json_response, make_client

POLICY = RetryPolicy(attempts=4, base_delay=1.0, max_delay=8.0, max_retry_after=60.0)


def err(status: int, code: str, detail: object = None, retry_after: float | None = None) -> e.CybercomError:
    cls = e.error_class(status, code)
    kwargs: dict[str, object] = {"status": status, "code": code, "detail": detail}
    if issubclass(cls, (e.Throttled, e.ServiceUnavailable)):
        kwargs["retry_after"] = retry_after
    return cls("m", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("method", "error", "attempt", "expected"),
    [
        ("GET", err(503, "database_unavailable"), 1, True),
        ("GET", err(429, "too_many_heavy_queries"), 3, True),
        ("GET", err(503, "database_unavailable"), 4, False),  # out of attempts
        ("GET", err(400, "invalid_query"), 1, False),
        ("GET", err(500, "server_error"), 1, False),
        ("PUT", err(503, "database_unavailable"), 1, True),
        ("POST", err(503, "database_unavailable"), 1, False),  # may have written
        ("PATCH", err(503, "database_unavailable"), 1, False),
        ("POST", err(503, "database_unavailable", {"inserted_count": 0, "inserted_ids": []}), 1, True),
        ("POST", err(503, "database_unavailable", {"inserted_count": 0, "unconfirmed_ids": ["a"]}), 1, False),
        ("POST", err(503, "broker_unavailable"), 1, True),
        ("POST", err(503, "broker_timeout", {"task_id": "t"}), 1, False),
        ("POST", err(429, "too_many_heavy_queries"), 1, True),
        ("POST", err(429, "throttled", retry_after=600), 1, False),  # a login lockout: do not sit and wait
        # The login throttle's 429 answers a wrong password: the same one again cannot get in.
        ("POST", err(429, "throttled", retry_after=2), 1, False),
    ],
)
def test_should_retry(method: str, error: e.CybercomError, attempt: int, expected: bool) -> None:
    assert POLICY.should_retry(method, error, attempt) is expected


def test_delay_honours_retry_after_up_to_a_cap_else_backs_off() -> None:
    assert POLICY.delay(1, 5.0) == 5.0
    assert POLICY.delay(1, 500.0) == 60.0
    assert [POLICY.delay(n, jitter=1.0) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert POLICY.delay(3, jitter=0.0) == 2.0


def test_nothing_written_for_refusals_only() -> None:
    assert nothing_written(err(503, "heavy_queries_busy"))
    assert not nothing_written(err(503, "database_unavailable"))


def test_session_retries_a_get_after_retry_after_and_returns_the_answer() -> None:
    answers = [
        error_response(429, "too_many_heavy_queries", "busy", retry_after="2"),
        error_response(503, "heavy_queries_busy", "busy", retry_after="1"),
        json_response(200, {"count": 0, "meta": {"page": 1, "page_size": 1, "pages": 1}, "results": []}),
    ]
    client, recorder = make_client(lambda _r: answers.pop(0))
    slept: list[float] = []
    client._session._sleep = slept.append
    assert client.data_store["d"]["c"].count() == 0
    assert slept == [2.0, 1.0]
    assert len(recorder.requests) == 3


def test_session_does_not_repeat_an_insert_that_may_have_written() -> None:
    client, recorder = make_client(
        lambda _r: error_response(
            503,
            "database_unavailable",
            "lost",
            {"inserted_ids": ["a"], "inserted_count": 1, "failed_index": 1},
        )
    )
    with pytest.raises(e.ServiceUnavailable):
        client._session.json("POST", "/api/data_store/data/d/c/", json=[{"_id": "a"}, {"_id": "b"}])
    assert len(recorder.requests) == 1


def test_session_retries_connection_failures_of_reads_only() -> None:
    calls = {"n": 0}

    def flaky(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            raise httpx.ConnectError("refused", request=request)
        return json_response(200, {"ok": True})

    client, _ = make_client(flaky)
    assert client._session.json("GET", "/api/x/") == {"ok": True}
    calls["n"] = 0
    with pytest.raises(httpx.ConnectError):
        client._session.json("POST", "/api/x/", json={})
