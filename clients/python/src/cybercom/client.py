"""``Client``: one connection to a cybercom service."""

from __future__ import annotations

import os
from typing import Any, Optional, Union

import httpx

from .auth import JwtAuth, TokenAuth, TokenPair
from .config import load_config
from .data_store import Area
from .retry import RetryPolicy
from .schedules import Schedules
from .session import Session
from .tasks import Tasks


class Client:
    """A cybercom service.

    ``Client(url, token=...)`` uses an API token; ``Client(url, username=..., password=...)`` logs
    in for a JWT pair that renews itself. Without arguments, ``CYBERCOM_URL`` / ``CYBERCOM_TOKEN``
    (or ``CYBERCOM_USERNAME`` / ``CYBERCOM_PASSWORD``) are used, then the file ``cybercom login``
    writes. TLS certificates are verified; ``ca_bundle=`` names the CA of a self-signed
    installation, ``verify=False`` turns verification off. ``compression=None`` (the default)
    asks for compressed answers unless the service is on this machine (``localhost`` or a
    loopback address), where compressing costs more than it saves; ``True`` or ``False`` decides.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        *,
        token: Optional[str] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        verify: Union[bool, str] = True,
        ca_bundle: Optional[str] = None,
        timeout: float = 60.0,
        retry: Optional[RetryPolicy] = None,
        transport: Optional[httpx.BaseTransport] = None,
        compression: Optional[bool] = None,
    ) -> None:
        stored = load_config() if url is None and not os.environ.get("CYBERCOM_URL") else {}
        url = url or os.environ.get("CYBERCOM_URL") or stored.get("url")
        if not url:
            raise ValueError("no service URL: pass Client(url) or set CYBERCOM_URL (or run `cybercom login`)")
        if token is None and username is None:
            token = os.environ.get("CYBERCOM_TOKEN") or stored.get("token")
            if token is None:
                username = os.environ.get("CYBERCOM_USERNAME")
                password = password or os.environ.get("CYBERCOM_PASSWORD")
        ca_bundle = ca_bundle or os.environ.get("CYBERCOM_CA_BUNDLE") or stored.get("ca_bundle")
        self.url = url.rstrip("/")
        self._session = Session(
            self.url,
            verify=ca_bundle or verify,
            timeout=timeout,
            retry=retry,
            transport=transport,
            compression=compression,
        )
        self._username = username
        if token is not None:
            self._session.auth = TokenAuth(token)
        elif username is not None:
            if password is None:
                raise ValueError("a username needs a password (or pass token=)")
            self._session.auth = JwtAuth(
                self._login(username, password),
                refresh=self._refresh,
                login=lambda: self._login(username, password),
            )
        self.data_store = Area(self._session, "data_store")
        self.catalog = Area(self._session, "catalog")
        self.tasks = Tasks(self._session)
        self.schedules = Schedules(self._session)

    def __repr__(self) -> str:
        return f"<cybercom.Client {self.url}>"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._session.close()

    def _login(self, username: str, password: str) -> TokenPair:
        answer = self._session.json(
            "POST", "/api/token/", json={"username": username, "password": password}, authenticated=False
        )
        return str(answer["access"]), str(answer["refresh"])

    def _refresh(self, refresh_token: str) -> TokenPair:
        answer = self._session.json(
            "POST", "/api/token/refresh/", json={"refresh": refresh_token}, authenticated=False
        )
        return str(answer["access"]), str(answer["refresh"])

    def user(self) -> dict[str, Any]:
        """The signed-in user's profile (``GET /api/user/``)."""
        return dict(self._session.json("GET", "/api/user/"))

    def health(self) -> dict[str, Any]:
        return dict(self._session.json("GET", "/api/health/", authenticated=False))

    def get(self, path: str, **params: Any) -> Any:
        """Any GET endpoint's JSON (an escape hatch for what has no method)."""
        return self._session.json("GET", path, params={k: str(v) for k, v in params.items()})
