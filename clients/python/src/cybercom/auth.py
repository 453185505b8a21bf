"""Credentials on every request: an API token, or a JWT pair that renews itself.

JWT refresh tokens are single use and rotated by the server; presenting a spent one revokes every
refresh token of that login. So renewals are serialized with a lock: when several threads get a
401 for the same access token, the first renews and the others use its new token instead of
spending the refresh token again. When renewing fails and the password is held, the client logs
in again.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from typing import Callable, Optional

import httpx

from .errors import AuthenticationFailed

TokenPair = tuple[str, str]


class TokenAuth(httpx.Auth):
    """``Authorization: Token <key>``."""

    def __init__(self, key: str) -> None:
        self._header = f"Token {key}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header
        yield request


class JwtAuth(httpx.Auth):
    """``Authorization: Bearer <access>``, renewed on a 401 through ``refresh`` (then ``login``)."""

    def __init__(
        self,
        pair: TokenPair,
        refresh: Callable[[str], TokenPair],
        login: Optional[Callable[[], TokenPair]] = None,
    ) -> None:
        self._access, self._refresh = pair
        self._refresh_call = refresh
        self._login_call = login
        self._lock = threading.Lock()
        self.renewals = 0
        self.logins = 0

    @property
    def access(self) -> str:
        return self._access

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        used = self._access
        request.headers["Authorization"] = f"Bearer {used}"
        response = yield request
        if response.status_code != 401:
            return
        self.renew(used)
        request.headers["Authorization"] = f"Bearer {self._access}"
        yield request

    def renew(self, rejected_access: str) -> None:
        """Gets a new pair unless another thread already replaced ``rejected_access``."""
        with self._lock:
            if self._access != rejected_access:
                return
            try:
                self._access, self._refresh = self._refresh_call(self._refresh)
                self.renewals += 1
            except AuthenticationFailed:
                if self._login_call is None:
                    raise
                self._access, self._refresh = self._login_call()
                self.logins += 1
