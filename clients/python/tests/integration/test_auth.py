"""JWT logins against the real server, whose access tokens live 2 s here and whose refresh tokens
are single use: a spent one presented again revokes the login's refresh tokens."""

import os
import threading
import time

from cybercom import Client
from cybercom.auth import JwtAuth

from .conftest import URL


def test_password_login_renews_once_for_many_threads() -> None:
    with Client(
        URL, username=os.environ["CYBERCOM_USERNAME"], password=os.environ["CYBERCOM_PASSWORD"]
    ) as client:
        auth = client._session.auth
        assert isinstance(auth, JwtAuth)
        assert client.user()["username"] == os.environ["CYBERCOM_USERNAME"]
        time.sleep(2.5)  # the access token expires
        started = time.monotonic()
        failures: list[BaseException] = []
        barrier = threading.Barrier(8)

        def work() -> None:
            try:
                barrier.wait()
                for _ in range(3):
                    client.data_store.databases()
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        # No fallback login: no refresh token was spent twice (the server would have revoked the
        # login). One rotation for all the threads that hit the expiry together, plus one for each
        # further lifetime the requests took on a busy machine. A token's expiry is written in
        # whole seconds, so a 2 s token issued late in a second lasts just over 1 s.
        assert auth.logins == 0
        assert 1 <= auth.renewals <= 1 + int(time.monotonic() - started)


def test_a_revoked_refresh_token_falls_back_to_the_password() -> None:
    with Client(
        URL, username=os.environ["CYBERCOM_USERNAME"], password=os.environ["CYBERCOM_PASSWORD"]
    ) as client:
        auth = client._session.auth
        assert isinstance(auth, JwtAuth)
        # Spend the client's refresh token behind its back: the server now refuses it.
        refresh = auth._refresh
        assert client._refresh(refresh)[0]
        time.sleep(2.5)
        assert client.user()["username"] == os.environ["CYBERCOM_USERNAME"]
        assert (auth.renewals, auth.logins) == (0, 1)
