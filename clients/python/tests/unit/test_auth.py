"""JWT renewal against a fake server that, like the real one, accepts each refresh token once."""

import threading
import time

import httpx
import pytest

from cybercom import AuthenticationFailed

from .recorded import body_of, error_response, json_response, make_client


class FakeJwtServer:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = 0
        self.valid_access = "a0"
        self.valid_refresh = "r0"
        self.refresh_calls = 0
        self.logins = 0
        self.reused = False

    def issue(self) -> dict[str, str]:
        self.generation += 1
        self.valid_access = f"a{self.generation}"
        self.valid_refresh = f"r{self.generation}"
        return {"access": self.valid_access, "refresh": self.valid_refresh}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            path = request.url.path
            if path == "/api/token/":
                self.logins += 1
                return json_response(200, self.issue())
            if path == "/api/token/refresh/":
                self.refresh_calls += 1
                if body_of(request)["refresh"] != self.valid_refresh:
                    self.reused = True
                    return error_response(401, "token_not_valid", "Token is blacklisted")
                return json_response(200, self.issue())
            stale = request.headers.get("authorization") != f"Bearer {self.valid_access}"
        # Slow answers, so every thread's request is in flight before the first renewal.
        time.sleep(0.05)
        if stale:
            return error_response(401, "token_not_valid", "Token is expired")
        return json_response(200, {"username": "u"})


def test_password_login_sends_bearer_and_renews_once_for_many_threads() -> None:
    server = FakeJwtServer()
    client, _ = make_client(server, token=None, username="u", password="p")
    assert server.logins == 1
    assert client.user() == {"username": "u"}
    server.valid_access = "expired-by-server"  # every thread's next request gets a 401
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work() -> None:
        try:
            barrier.wait()
            for _ in range(3):
                assert client.user() == {"username": "u"}
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # Exactly one renewal for all the threads: the refresh token is never presented twice.
    assert (server.refresh_calls, server.logins, server.reused) == (1, 1, False)


def test_a_refused_refresh_logs_in_again_with_the_password() -> None:
    server = FakeJwtServer()
    client, _ = make_client(server, token=None, username="u", password="p")
    server.issue()  # the client's pair is revoked (e.g. its refresh token was reused elsewhere)
    assert client.user() == {"username": "u"}
    assert (server.refresh_calls, server.logins) == (1, 2)


def test_refresh_rotates_the_pair() -> None:
    server = FakeJwtServer()
    client, _ = make_client(server, token=None, username="u", password="p")
    server.valid_access = "expired-by-server"  # the access token expires; the refresh token is still good
    assert client.user() == {"username": "u"}
    assert (server.refresh_calls, server.logins, server.reused) == (1, 1, False)


def test_without_a_password_a_failed_refresh_raises() -> None:
    from cybercom.auth import JwtAuth

    def refresh(_token: str) -> tuple[str, str]:
        raise AuthenticationFailed("spent", status=401, code="token_not_valid")

    auth = JwtAuth(("a", "r"), refresh=refresh)
    with pytest.raises(AuthenticationFailed):
        auth.renew("a")
    auth.renew("an older access token")  # already replaced: nothing to do


def test_token_auth_and_accept_header_on_every_request() -> None:
    client, recorder = make_client(lambda _r: json_response(200, {"ok": 1}), token="secret")
    client.user()
    request = recorder.requests[0]
    assert request.headers["authorization"] == "Token secret"
    assert request.headers["accept"] == "application/json"
