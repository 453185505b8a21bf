"""Which answers the client asks to have compressed, that it reads them either way, and how it
cuts a stream into pieces of lines."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from typing import Optional

import httpx
import pytest

from cybercom import Client, ProtocolError
from cybercom import session as session_module
from cybercom.session import is_loopback

from .recorded import Recorder

RECORDS = b'{"_id": "a", "n": 1}\n{"_id": "b", "n": 2}\n'


def accept_encoding(url: str, compression: Optional[bool] = None) -> str:
    """The Accept-Encoding a client of ``url`` sends with a streamed find."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=RECORDS, headers={"content-type": "application/x-ndjson"})

    recorder = Recorder(handler)
    client = Client(url, token="k", transport=httpx.MockTransport(recorder), compression=compression)
    assert len(list(client.data_store["d"]["c"].find())) == 2
    (request,) = recorder.requests
    return request.headers["accept-encoding"]


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8000",
        "http://LOCALHOST",
        "http://api.localhost",
        "http://127.0.0.1:8000",
        "https://127.1.2.3",
        "http://[::1]:8000",
    ],
)
def test_a_service_on_this_machine_is_asked_for_answers_as_they_are(url: str) -> None:
    assert is_loopback(url)
    assert accept_encoding(url) == "identity"


@pytest.mark.parametrize(
    "url",
    [
        "https://cybercom.example.org",
        "http://api.test",
        "http://10.0.0.5:8000",
        "http://[2001:db8::1]",
        "http://localhost.example.org",
    ],
)
def test_a_service_elsewhere_is_asked_for_compressed_answers(url: str) -> None:
    assert not is_loopback(url)
    assert "gzip" in accept_encoding(url)


def test_compression_named_by_the_caller_wins() -> None:
    assert "gzip" in accept_encoding("http://127.0.0.1:8000", compression=True)
    assert accept_encoding("https://cybercom.example.org", compression=False) == "identity"


def test_a_compressed_stream_is_read_as_it_is_sent() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert "gzip" in request.headers["accept-encoding"]
        body = gzip.compress(RECORDS)
        # In pieces, as a stream arrives: records end anywhere in the compressed bytes.
        pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
        headers = {"content-type": "application/x-ndjson", "content-encoding": "gzip"}
        return httpx.Response(200, content=iter(pieces), headers=headers)

    client = Client("https://cybercom.example.org", token="k", transport=httpx.MockTransport(handler))
    assert list(client.data_store["d"]["c"].find()) == [{"_id": "a", "n": 1}, {"_id": "b", "n": 2}]


@pytest.mark.parametrize("block_bytes", [1, 5000, 1 << 20])
def test_line_blocks_gather_reads_into_pieces_of_whole_lines(
    monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    monkeypatch.setattr(session_module, "LINE_BLOCK_BYTES", block_bytes)
    # Lines of many lengths, some far longer than a piece; the last one without its newline.
    lines = [b'{"n": %d, "note": "%s"}' % (n, b"x" * (n * n * 37)) for n in range(30)]
    body = b"\n".join(lines)
    read = 997
    reads = [body[i : i + read] for i in range(0, len(body), read)]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=iter(reads), headers={"content-type": "application/x-ndjson"})

    client = Client("http://api.test", token="k", transport=httpx.MockTransport(handler))
    blocks = list(client._session.line_blocks("/x"))
    assert b"".join(blocks) == body
    assert all(block.endswith(b"\n") for block in blocks[:-1])
    # Reads are gathered: a piece holds the size asked for, less the part of a read after its
    # last newline.
    assert all(len(block) > block_bytes - read for block in blocks[:-1])
    if block_bytes == 1:
        assert len(blocks) > 30 / 2
    if block_bytes > len(body):
        assert blocks == [body]


@pytest.mark.parametrize("block_bytes", [1, 1 << 20])
def test_a_stream_cut_off_part_way_raises_after_the_records_before_it(
    monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    monkeypatch.setattr(session_module, "LINE_BLOCK_BYTES", block_bytes)

    def cut_off() -> Iterator[bytes]:
        yield RECORDS
        yield b'{"_id": "c", "n'
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=cut_off(), headers={"content-type": "application/x-ndjson"})

    client = Client("http://api.test", token="k", transport=httpx.MockTransport(handler))
    seen = []
    with pytest.raises(ProtocolError) as caught:
        for record in client.data_store["d"]["c"].find():
            seen.append(record["n"])
    assert caught.value.code == "stream_cut"
    # Records are handed on a piece at a time: those of a piece not yet complete are not.
    assert seen == ([1, 2] if block_bytes == 1 else [])
