"""One HTTP session to the service: base URL, TLS, credentials, JSON, error mapping and retries."""

from __future__ import annotations

import ipaddress
import logging
import ssl
import time
from collections.abc import Iterator
from typing import Any, Callable, Optional, Union

import httpx
import orjson

from . import ejson
from ._version import __version__
from .errors import ProtocolError, error_from_response
from .retry import RetryPolicy

log = logging.getLogger("cybercom")

Params = dict[str, Union[str, int]]

#: About how much of a stream :meth:`Session.line_blocks` gathers into one piece of lines.
LINE_BLOCK_BYTES = 256 * 1024


class _ReportedBody:
    """A request body that calls ``on_sent`` once the connection has taken all of it (httpx asks
    an iterable body for more only after writing what it gave). Sent with its Content-Length, as
    bytes are, and iterable again should the request be sent again."""

    def __init__(self, body: bytes, on_sent: Callable[[], None]) -> None:
        self._body = body
        self._on_sent = on_sent

    def __iter__(self) -> Iterator[bytes]:
        yield self._body
        self._on_sent()


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine: ``localhost`` (or a name under ``.localhost``) or a
    loopback address (``127.0.0.0/8``, ``::1``)."""
    host = httpx.URL(url).host.lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Session:
    """Sends requests and turns answers into parsed JSON or :class:`CybercomError` exceptions.

    ``compression``: whether answers are asked for compressed (the service then sends text of
    more than a kilobyte as Brotli or gzip). ``None`` (the default) asks for it unless ``url`` is
    on this machine (:func:`is_loopback`): there the bytes cost next to nothing to move, while
    compressing a long read takes a sixth or more of the service's CPU, and inflating it some of
    the client's, on the cores the two share."""

    def __init__(
        self,
        url: str,
        *,
        verify: Union[bool, str] = True,
        timeout: float = 60.0,
        retry: Optional[RetryPolicy] = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: Optional[httpx.BaseTransport] = None,
        compression: Optional[bool] = None,
    ) -> None:
        self.base_url = url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        headers = {"Accept": "application/json", "User-Agent": f"cybercom-python/{__version__}"}
        if not (compression if compression is not None else not is_loopback(self.base_url)):
            # httpx asks for gzip (and Brotli, zstd when their packages are there) by default.
            headers["Accept-Encoding"] = "identity"
        self.http = httpx.Client(
            base_url=self.base_url,
            verify=ssl.create_default_context(cafile=verify) if isinstance(verify, str) else verify,
            timeout=timeout,
            headers=headers,
            follow_redirects=False,
            transport=transport,
        )
        self.auth: Optional[httpx.Auth] = None

    def close(self) -> None:
        self.http.close()

    def absolute(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"

    def _send(
        self,
        method: str,
        path: str,
        params: Optional[Params],
        body: Optional[bytes],
        *,
        authenticated: bool,
        stream: bool,
        on_sent: Optional[Callable[[], None]] = None,
    ) -> httpx.Response:
        headers = {"Content-Type": "application/json"} if body is not None else None
        content: Union[bytes, _ReportedBody, None] = body
        if body is not None and on_sent is not None:
            headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
            content = _ReportedBody(body, on_sent)
        request = self.http.build_request(method, path, params=params, content=content, headers=headers)
        auth: Any = self.auth if authenticated and self.auth is not None else None
        return self.http.send(request, auth=auth, stream=stream)

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Params] = None,
        json: Any = None,
        content: Optional[bytes] = None,
        authenticated: bool = True,
        stream: bool = False,
        on_sent: Optional[Callable[[], None]] = None,
    ) -> httpx.Response:
        """A successful response (2xx/3xx); errors raise. Retries per the retry policy. The body is
        ``json`` (encoded to Extended JSON here) or ``content`` (JSON bytes encoded by the caller).
        ``on_sent`` is called each time the connection has taken the whole body."""
        body = ejson.dumps(json) if json is not None else content
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._send(
                    method, path, params, body, authenticated=authenticated, stream=stream, on_sent=on_sent
                )
            except httpx.TransportError as exc:
                if not self.retry.should_retry_connection(method, attempt):
                    raise
                wait = self.retry.delay(attempt)
                log.info("%s %s: %s; retrying in %.1fs", method, path, exc, wait)
                self._sleep(wait)
                continue
            if response.status_code < 400:
                return response
            if stream:
                response.read()
                response.close()
            error = error_from_response(
                response.status_code, response.content, response.headers, str(response.request.url)
            )
            if not self.retry.should_retry(method, error, attempt):
                raise error
            wait = self.retry.delay(attempt, getattr(error, "retry_after", None))
            log.info("%s %s: %s; retrying in %.1fs", method, path, error, wait)
            self._sleep(wait)

    def json(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Params] = None,
        json: Any = None,
        content: Optional[bytes] = None,
        authenticated: bool = True,
        on_sent: Optional[Callable[[], None]] = None,
    ) -> Any:
        """The answer's JSON (not yet decoded from Extended JSON); ``on_sent`` as for :meth:`send`."""
        response = self.send(
            method,
            path,
            params=params,
            json=json,
            content=content,
            authenticated=authenticated,
            on_sent=on_sent,
        )
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            kind = response.headers.get("content-type", "?")
            raise ProtocolError(
                f"expected JSON from {method} {path}, got {kind}: {response.text[:200]!r}",
                status=response.status_code,
                code="not_json",
            ) from exc

    def lines(self, path: str, params: Optional[Params] = None) -> Iterator[bytes]:
        """The non-empty lines of a streamed answer (NDJSON), read with bounded memory."""
        for block in self.line_blocks(path, params):
            for line in block.split(b"\n"):
                if line.strip():
                    yield line

    def line_blocks(self, path: str, params: Optional[Params] = None) -> Iterator[bytes]:
        """A streamed answer (NDJSON) in pieces of whole lines, as it arrives: each piece is what
        came in since the last one, once that is :data:`LINE_BLOCK_BYTES` or more, up to its last
        newline (the rest of a line is kept for the next), so that it can be parsed with one call
        rather than one a line. Memory stays bounded by that size, a read of the connection and
        the longest line. The last piece may lack its final newline."""
        response = self.send("GET", path, params=params, stream=True)
        try:
            # Taken as the connection gives them (iter_bytes without a size: no re-chunking
            # copies) and split as bytes: iter_lines() would decode every line to text only for
            # the JSON parser to take it as bytes again. A read brings 64 KB at most, often less
            # (it ends where the service's chunk does): each piece parsed costs a few calls of its
            # own, so reads are gathered into larger pieces first.
            pending: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                pending.append(chunk)
                size += len(chunk)
                if size < LINE_BLOCK_BYTES:
                    continue
                # Joined only once a newline came: a line longer than a piece is copied once.
                last = chunk.rfind(b"\n")
                if last < 0:
                    continue
                data = pending[0] if len(pending) == 1 else b"".join(pending)
                end = size - len(chunk) + last + 1
                if end == size:
                    pending = []
                    size = 0
                    yield data
                else:
                    pending = [data[end:]]
                    size -= end
                    yield data[:end]
            rest = b"".join(pending)
            if rest.strip():
                yield rest
        except httpx.RemoteProtocolError as exc:
            raise ProtocolError(f"the stream of {path} was cut off: {exc}", code="stream_cut") from exc
        finally:
            response.close()

    def pages(self, path: str, params: Params, page_size: int) -> Iterator[dict[str, Any]]:
        """Every envelope page of a listing, page by page (bounded memory)."""
        page = 1
        while True:
            envelope = self.json("GET", path, params={**params, "page": page, "page_size": page_size})
            if not isinstance(envelope, dict) or "results" not in envelope:
                raise ProtocolError(f"expected the paged envelope from {path}", code="not_envelope")
            yield envelope
            pages = int(envelope.get("meta", {}).get("pages", 1) or 1)
            if page >= pages or not envelope["results"] or envelope.get("next") is None:
                return
            page += 1

    def results(self, path: str, params: Optional[Params] = None, page_size: int = 1000) -> Iterator[Any]:
        """Every result of a paged listing, one at a time."""
        for envelope in self.pages(path, params or {}, page_size):
            yield from envelope["results"]
