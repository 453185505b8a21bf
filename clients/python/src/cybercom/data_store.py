"""The data store and the catalog, read like the data: ``client.data_store["db"]["col"].find(...)``."""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional, Union
from urllib.parse import quote, urlencode

import httpx
import orjson

from . import ejson
from .errors import BadRequest, CybercomError, NotFound, ProtocolError
from .frames import FrameConversions
from .progress import progress_bar
from .results import DeleteResult, RecordList, UpdateResult
from .session import Params, Session

#: Decoded records, and whether they are parsed JSON only (see ejson.decode_lines).
_Block = tuple[list[Any], bool]

SortSpec = Union[Mapping[str, int], Sequence[tuple[str, int]], str, None]
IndexKeys = Union[Mapping[str, Union[int, str]], Sequence[tuple[str, Union[int, str]]], str]

EXPORT_FORMATS = ("csv", "ndjson", "json")


def _seg(name: str) -> str:
    return quote(str(name), safe="")


def sort_document(sort: SortSpec) -> Optional[dict[str, int]]:
    """``{"a": 1}``, ``[("a", 1), ("b", -1)]`` or ``"-b"`` (descending) as the API's sort object."""
    if sort is None:
        return None
    if isinstance(sort, str):
        return {sort[1:]: -1} if sort.startswith("-") else {sort: 1}
    if isinstance(sort, Mapping):
        return {str(k): int(v) for k, v in sort.items()}
    return {str(k): int(v) for k, v in sort}


def query_param(
    filter: Optional[Mapping[str, Any]] = None,
    projection: Optional[Mapping[str, Any]] = None,
    sort: SortSpec = None,
) -> Optional[str]:
    """The ``query`` URL parameter (Extended JSON text), or None when nothing is asked."""
    query: dict[str, Any] = {}
    if filter:
        query["filter"] = ejson.encode(filter)
    if projection:
        query["projection"] = ejson.encode(projection)
    sort_doc = sort_document(sort)
    if sort_doc:
        query["sort"] = sort_doc
    return orjson.dumps(query).decode("utf-8") if query else None


#: The most records one insert request carries (the engine refuses write batches far larger).
INSERT_CHUNK_RECORDS = 10_000
#: How many ids one presence query names (see :meth:`Collection.present_prefix`): the query
#: travels in the URL, which the service (16 KB of request headers) and httpx bound, while an
#: interrupted insert may leave a whole chunk of unconfirmed ids.
PRESENCE_QUERY_IDS = 100
#: About the most JSON one insert request carries: the size of the service's own insert commands
#: (about 1 MB), so that a request is one command. Larger requests cost the service more than they
#: save: it holds a request's records until the last of its commands is answered, and the more it
#: holds, the more of them its garbage collector copies and promotes. A request still spreads its
#: fixed cost over about a thousand records of 1 KB.
INSERT_CHUNK_BYTES = 1024 * 1024


def _ids_in(body: bytes) -> list[Any]:
    """The ``_id`` of each record of an insert body, typed as the caller gave it. Read back from
    the body only when a chunk's answer is lost, so that inserts that succeed pay nothing for it."""
    return [ejson.decode(record["_id"], typed=False) for record in orjson.loads(body)]


def encoded_chunks(
    records: Iterable[Mapping[str, Any]], max_records: int, max_bytes: int
) -> Generator[tuple[list[Any], bytes], None, None]:
    """The records as JSON array bodies of at most ``max_records`` records and, unless a single
    record is larger, at most ``max_bytes``: (the records' ids, body) per chunk. Each record is
    serialised once, and the body is joined from those bytes.

    A record without ``_id`` is sent with a new :class:`~cybercom.ejson.ObjectId` as its first
    field, as MongoDB drivers do: when a chunk's answer is lost, the ids of its records are known
    all the same, and can be looked up. The id is joined to the record's JSON bytes, so that the
    caller's record is left as it is and not copied to add it. The ids are each record's ``_id``
    as the caller gave it, or the ObjectId made for it: what the records are stored with."""
    parts: list[bytes] = []
    ids: list[Any] = []
    size = 2
    new_id = ejson.ObjectId.new
    for record in records:
        data = ejson.dumps(record if type(record) is dict else dict(record))
        if "_id" in record:
            rid = record["_id"]
        else:
            rid = new_id()
            head = b'{"_id":{"$oid":"' + rid.encode("ascii")
            data = head + (b'"},' + data[1:] if len(data) > 2 else b'"}}')
        if parts and (len(parts) >= max_records or size + len(data) + 1 > max_bytes):
            yield ids, b"[" + b",".join(parts) + b"]"
            parts = []
            ids = []
            size = 2
        parts.append(data)
        ids.append(rid)
        size += len(data) + 1
    if parts:
        yield ids, b"[" + b",".join(parts) + b"]"


#: The ``code`` of an :class:`InsertError` whose chunk got no answer (its ``status`` is None).
TRANSPORT_ERROR = "transport_error"


class InsertError(CybercomError):
    """An insert stopped part-way. ``inserted_ids`` were written (in order); the records from
    ``failed_index`` on were not, except possibly those in ``unconfirmed_ids`` (the records from
    ``failed_index`` on whose write the server could not confirm; the insert is ordered, so those
    written are a prefix of them). ``cause`` is the error the server answered for the failing
    chunk or, when no answer came (the connection failed or timed out), the
    ``httpx.TransportError``: then ``code`` is ``"transport_error"`` and every id of that chunk is
    unconfirmed.

    To resume: ``records[err.failed_index + col.present_prefix(err.unconfirmed_ids):]``."""

    def __init__(
        self,
        cause: Union[CybercomError, httpx.TransportError],
        *,
        inserted_ids: list[Any],
        failed_index: int,
        unconfirmed_ids: list[Any],
    ) -> None:
        if isinstance(cause, CybercomError):
            reason = str(cause)
            status, code, detail, url = cause.status, cause.code, cause.detail, cause.url
            self.cause_message = cause.message
        else:
            # An httpx error's text may be empty (a bare ReadError): its class says what happened.
            reason = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
            status, code, detail, url = None, TRANSPORT_ERROR, None, _request_url(cause)
            self.cause_message = reason
        super().__init__(
            f"insert stopped at record {failed_index} after {len(inserted_ids)} records were written: "
            f"{reason}",
            status=status,
            code=code,
            detail=detail,
            url=url,
        )
        self.cause = cause
        self.inserted_ids = inserted_ids
        self.failed_index = failed_index
        self.unconfirmed_ids = unconfirmed_ids

    def report(self) -> dict[str, Any]:
        """A JSON-ready account of what was written (``cybercom import --resume`` reads it)."""
        # Ids as Extended JSON, so that they keep their type (an ObjectId is not its hex text):
        # resuming looks the unconfirmed ones up by value.
        return {
            "inserted_count": len(self.inserted_ids),
            "inserted_ids": [ejson.encode(i) for i in self.inserted_ids],
            "failed_index": self.failed_index,
            "unconfirmed_ids": [ejson.encode(i) for i in self.unconfirmed_ids],
            "error": {"status": self.status, "code": self.code, "message": self.cause_message},
        }


def _request_url(error: httpx.TransportError) -> Optional[str]:
    try:
        return str(error.request.url)
    except RuntimeError:  # raised outside a request: httpx has none to give
        return None


class Cursor(FrameConversions):
    """The records a ``find`` matches, fetched lazily. Iterate it (again and again: each iteration
    reads afresh) or turn it into a DataFrame/Arrow table/GeoDataFrame. Memory stays bounded while
    iterating: one page at a time, or one line at a time when the server streams NDJSON."""

    def __init__(
        self,
        collection: Collection,
        filter: Optional[Mapping[str, Any]],
        projection: Optional[Mapping[str, Any]],
        sort: SortSpec,
        page_size: int,
        limit: Optional[int],
        stream: Optional[bool],
        typed: bool,
        skip: int = 0,
    ) -> None:
        self._collection = collection
        self.filter = filter
        self.projection = projection
        self.sort = sort
        self.page_size = page_size
        self.limit = limit
        self.stream = stream
        self.typed = typed
        self._skip = _at_least_zero(skip, "skip")

    def skip(self, count: int) -> Cursor:
        """Leaves out the first ``count`` records of the result (after filter and sort), as
        pymongo's ``cursor.skip``: the server skips them, nothing is downloaded for them. Returns
        the cursor, so that ``col.find(...).skip(100)`` reads on."""
        self._skip = _at_least_zero(count, "skip")
        return self

    def _blocks(self, object_ids: bool = True) -> Generator[_Block, None, None]:
        """Every record, decoded, a block at a time: those of one read of a stream (see
        ejson.decode_lines; ``object_ids`` as there) or of one page (ejson.decode_parsed_record)."""
        col = self._collection
        query = query_param(self.filter, self.projection, self.sort)
        params: Params = {} if query is None else {"query": query}
        if self._skip:
            params["skip"] = self._skip
        use_stream = self.stream
        if use_stream is None:
            use_stream = col._area._ndjson_supported is not False and self.limit is None
        typed = self.typed
        if use_stream:
            blocks = col._session.line_blocks(col.path, {**params, "format": "ndjson"})
            try:
                first = next(blocks, None)
            except BadRequest as exc:
                if exc.code != "invalid_format" or self.stream:
                    raise
                col._area._ndjson_supported = False
            else:
                col._area._ndjson_supported = True
                if first is None:
                    return
                yield ejson.decode_lines(first, typed=typed, object_ids=object_ids)
                for block in blocks:
                    yield ejson.decode_lines(block, typed=typed, object_ids=object_ids)
                return
        size = self.page_size if self.limit is None else min(self.page_size, max(self.limit, 1))
        for envelope in col._session.pages(col.path, params, size):
            # Each record was just parsed and is only ever seen by the caller: decoded in place.
            yield [ejson.decode_parsed_record(record, typed=typed) for record in envelope["results"]], False

    def _limited_blocks(self, object_ids: bool = True) -> Iterator[_Block]:
        """:meth:`_blocks` up to ``limit`` records."""
        blocks = self._blocks(object_ids)
        if self.limit is None:
            yield from blocks
            return
        left = self.limit
        try:
            for records, plain in blocks:
                if len(records) >= left:
                    yield records[:left], plain
                    return
                left -= len(records)
                yield records, plain
        finally:
            blocks.close()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for records, _ in self._limited_blocks():
            yield from records

    def to_list(self) -> list[dict[str, Any]]:
        return list(self)

    def count(self) -> int:
        """How many records the filter matches (the server counts; nothing is downloaded). Like
        pymongo's ``count_documents``, it leaves ``skip`` and ``limit`` aside."""
        return self._collection.count(self.filter)

    def _frame_blocks(self, progress: bool) -> Iterable[_Block]:
        # A frame keeps an ObjectId as its text: the ids are left as text, not made and unmade.
        blocks = self._limited_blocks(object_ids=False)
        if not progress:
            return blocks
        return self._counted(blocks)

    def _frame_records(self, progress: bool) -> Iterable[dict[str, Any]]:
        if not progress:
            return self
        return (record for records, _ in self._counted(self._limited_blocks()) for record in records)

    def _counted(self, blocks: Iterator[_Block]) -> Iterator[_Block]:
        """``blocks``, behind a progress bar counting their records."""
        total = max(0, self.count() - self._skip)
        bar = progress_bar(total=total if self.limit is None else min(total, self.limit), unit="rec")
        try:
            for block in blocks:
                yield block
                bar.update(len(block[0]))
        finally:
            bar.close()


class Collection:
    """One collection: ``area["db"]["col"]``."""

    def __init__(self, database: Database, name: str) -> None:
        self.database = database
        self.name = name
        self._area = database._area
        self._session = database._session
        self.path = f"{database.path}{_seg(name)}/"

    def __repr__(self) -> str:
        return f"<Collection {self._area.name}:{self.database.name}.{self.name}>"

    # ---- reading -------------------------------------------------------------------------
    def find(
        self,
        filter: Optional[Mapping[str, Any]] = None,
        projection: Optional[Mapping[str, Any]] = None,
        sort: SortSpec = None,
        *,
        skip: int = 0,
        limit: Optional[int] = None,
        page_size: int = 1000,
        stream: Optional[bool] = None,
        typed: bool = True,
    ) -> Cursor:
        """Every matching record, lazily (docs/python-client.md has a table of these options).

        ``filter``, ``projection`` and ``sort`` are MongoDB's (``sort`` also ``"name"``,
        ``"-name"`` or ``[("a", 1), ("b", -1)]``). ``skip`` leaves out the first records and
        ``limit`` stops after that many (0: no limit), as in pymongo. ``page_size`` is how many records one
        request fetches when paging. ``stream=None`` streams NDJSON when the server offers it and
        no ``limit`` is set, and pages otherwise; ``True`` insists on streaming, ``False`` pages.
        ``typed`` (default) turns ISO dates into ``datetime`` and a hex ``_id`` into
        :class:`~cybercom.ejson.ObjectId`; ``typed=False`` leaves them as the text the server sent."""
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        if limit is not None and _at_least_zero(limit, "limit") == 0:
            limit = None  # pymongo's "no limit"
        return Cursor(self, filter, projection, sort, page_size, limit, stream, typed, skip)

    def find_one(self, filter: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Optional[dict[str, Any]]:
        return next(iter(self.find(filter, limit=1, stream=False, **kwargs)), None)

    def count(self, filter: Optional[Mapping[str, Any]] = None) -> int:
        query = query_param(filter)
        params: Params = {"page_size": 1} if query is None else {"page_size": 1, "query": query}
        return int(self._session.json("GET", self.path, params=params)["count"])

    def distinct(
        self, field: Union[str, Sequence[str]], filter: Optional[Mapping[str, Any]] = None
    ) -> list[Any]:
        """Distinct values of one field (arrays unwound), or distinct combinations of several (dicts)."""
        fields = field if isinstance(field, str) else ",".join(field)
        params: Params = {"distinct": fields}
        query = query_param(filter)
        if query is not None:
            params["query"] = query
        return [ejson.decode(v) for v in self._session.results(self.path, params)]

    def aggregate(
        self, pipeline: Sequence[Mapping[str, Any]], filter: Optional[Mapping[str, Any]] = None
    ) -> RecordList:
        """The results of an aggregation pipeline (the filter, if any, applies first): a list,
        with ``to_dataframe()``, ``to_arrow()`` and ``to_geodataframe()``."""
        params: Params = {"aggregate": orjson.dumps(ejson.encode(list(pipeline))).decode("utf-8")}
        query = query_param(filter)
        if query is not None:
            params["query"] = query
        return RecordList(ejson.decode(v) for v in self._session.results(self.path, params))

    def present_prefix(self, ids: Sequence[Any]) -> int:
        """How many of ``ids``, from the first on, the collection holds, up to the first it lacks:
        which of an interrupted insert's ``unconfirmed_ids`` were written after all (an ordered
        insert writes a prefix). Asks about a bounded number of ids per request."""
        count = 0
        for start in range(0, len(ids), PRESENCE_QUERY_IDS):
            batch = list(ids[start : start + PRESENCE_QUERY_IDS])
            rows = self.find({"_id": {"$in": batch}}, {"_id": 1}, stream=False, typed=False)
            present = {str(row["_id"]) for row in rows}
            for rid in batch:
                if str(rid) not in present:
                    return count
                count += 1
        return count

    def get(self, id: Any, *, typed: bool = True) -> dict[str, Any]:
        """One record by ``_id`` (NotFound when there is none)."""
        return ejson.decode_record(self._session.json("GET", self._record_path(id)), typed=typed)  # type: ignore[no-any-return]

    def _record_path(self, id: Any) -> str:
        return f"{self.path}{_seg(str(id))}/"

    # ---- writing -------------------------------------------------------------------------
    def insert_one(self, record: Mapping[str, Any]) -> Any:
        """Inserts one record; returns its ``_id``. A record without one is sent with a new
        :class:`~cybercom.ejson.ObjectId`, as :meth:`insert` does, so that when the answer is lost
        the :class:`InsertError` names the id to look up (its ``unconfirmed_ids``)."""
        ((_, body),) = encoded_chunks([record], 1, 0)
        one = body[1:-1]  # the chunk's only record, sent as a record rather than a list of one
        try:
            answer = self._session.json("POST", self.path, content=one)
        except httpx.TransportError as exc:
            raise InsertError(exc, inserted_ids=[], failed_index=0, unconfirmed_ids=_ids_in(body)) from exc
        return ejson.decode_record({"_id": answer["_id"]})["_id"]

    def insert(
        self,
        records: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]],
        *,
        chunk_size: int = INSERT_CHUNK_RECORDS,
        progress: Optional[bool] = None,
        total: Optional[int] = None,
    ) -> list[Any]:
        """Inserts records in ordered chunks and returns their ``_id`` values in order. A chunk is
        at most ``chunk_size`` records and about :data:`INSERT_CHUNK_BYTES` of JSON.

        When a chunk fails part-way, raises :class:`InsertError` with exactly what was written."""
        if isinstance(records, Mapping):
            return [self.insert_one(records)]
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        if total is None and isinstance(records, Sequence):
            total = len(records)
        show = progress if progress is not None else (total or 0) > chunk_size
        written: list[Any] = []
        bar = progress_bar(
            total=total, unit="rec", disable=not show, desc=f"{self.database.name}.{self.name}"
        )
        chunks = encoded_chunks(records, chunk_size, INSERT_CHUNK_BYTES)
        # One request at a time, so that what is written is always a prefix of the records and a
        # failure can be reported exactly; but the next chunk is serialised while the current
        # one is on its way (the request runs on a thread, mostly waiting on the socket), so the
        # service never waits on this side. Every record is sent with its id (encoded_chunks):
        # the service answers a chunk with its count alone (answer=count), not with ids that are
        # known here already.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cybercom-insert") as sender:

            def send(
                chunk: Optional[tuple[list[Any], bytes]],
            ) -> Optional[tuple[list[Any], bytes, Future[Any]]]:
                """The chunk's request, started (None when there is no chunk left). Returns once
                its body is sent: serialising the next chunk meanwhile would hold the interpreter
                lock that the sending thread needs between its writes, and a thread waits for that
                lock up to the switch interval (5 ms) each time; once the body is sent, that
                thread waits on the socket, without the lock, for the service's answer."""
                if chunk is None:
                    return None
                ids, body = chunk
                sent_body = threading.Event()
                future = sender.submit(self._post_chunk, body, sent_body.set)
                sent_body.wait()
                return ids, body, future

            try:
                pending = send(next(chunks, None))
                while pending is not None:
                    ids, body, sent = pending
                    following = next(chunks, None)
                    try:
                        answer = sent.result()
                    except CybercomError as exc:
                        raise self._partial(exc, written) from exc
                    except httpx.TransportError as exc:
                        # No answer: the chunk may be written in full, in part or not at all.
                        raise InsertError(
                            exc,
                            inserted_ids=written,
                            failed_index=len(written),
                            unconfirmed_ids=_ids_in(body),
                        ) from exc
                    if answer.get("inserted_count", len(ids)) != len(ids):
                        raise ProtocolError(
                            f"{self.path}: {len(ids)} records were sent and "
                            f"{answer.get('inserted_count')} are answered as inserted",
                            code="insert_count",
                        )
                    pending = send(following)
                    written.extend(ids)
                    bar.update(len(ids))
                return written
            finally:
                chunks.close()
                bar.close()

    def _post_chunk(self, body: bytes, on_sent: Callable[[], None]) -> Any:
        """The answer to one chunk's request; ``on_sent`` is called once its body is sent, and
        in any case before this returns or raises. A service older than ``answer=count`` refuses
        the parameter (a 400 before anything is written): the chunk is sent again without it, and
        so are the following ones."""
        area = self._area
        post = self._session.json
        try:
            if area._count_answers is not False:
                try:
                    answer = post(
                        "POST", self.path, params={"answer": "count"}, content=body, on_sent=on_sent
                    )
                except BadRequest as exc:
                    if exc.code != "unknown_parameter" or area._count_answers:
                        raise
                    area._count_answers = False
                else:
                    area._count_answers = True
                    return answer
            return post("POST", self.path, content=body, on_sent=on_sent)
        finally:
            on_sent()

    @staticmethod
    def _partial(error: CybercomError, written: list[Any]) -> InsertError:
        detail = error.detail if isinstance(error.detail, dict) else {}
        chunk_ids = [ejson.decode_record({"_id": i})["_id"] for i in detail.get("inserted_ids", [])]
        failed_in_chunk = int(detail.get("failed_index", len(chunk_ids)))
        unconfirmed = [ejson.decode_record({"_id": i})["_id"] for i in detail.get("unconfirmed_ids", [])]
        return InsertError(
            error,
            inserted_ids=written + chunk_ids,
            failed_index=len(written) + failed_in_chunk,
            unconfirmed_ids=unconfirmed,
        )

    def replace(self, id: Any, record: Mapping[str, Any]) -> dict[str, Any]:
        """Replaces the whole record (its ``_id`` stays)."""
        return ejson.decode_record(self._session.json("PUT", self._record_path(id), json=dict(record)))  # type: ignore[no-any-return]

    def update(self, id: Any, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Merges plain fields (``$set``) or applies update operators; returns the updated record."""
        return ejson.decode_record(self._session.json("PATCH", self._record_path(id), json=dict(changes)))  # type: ignore[no-any-return]

    def delete(self, id: Any) -> None:
        self._session.json("DELETE", self._record_path(id))

    def update_many(self, filter: Mapping[str, Any], update: Mapping[str, Any]) -> UpdateResult:
        """Applies ``update`` to every record ``filter`` matches (``{}``: every record), as
        pymongo's ``update_many``: plain fields are merged with ``$set``, or update operators, as
        :meth:`update` takes them. The filter is required, so that no call changes everything by
        leaving it out."""
        answer = self._session.json("PATCH", self.path, params=_write_filter(filter), json=dict(update))
        return UpdateResult(int(answer["matched_count"]), int(answer["modified_count"]))

    def delete_many(self, filter: Mapping[str, Any]) -> DeleteResult:
        """Removes every record ``filter`` matches (``{}``: every record; the collection stays), as
        pymongo's ``delete_many``. A delete whose answer was lost is sent again (deleting by a
        filter twice removes nothing more); ``deleted_count`` is then what the last try removed."""
        answer = self._session.json("DELETE", self.path, params=_write_filter(filter))
        return DeleteResult(int(answer["deleted_count"]))

    def drop(self) -> None:
        """Deletes the collection and everything in it."""
        self.database.drop_collection(self.name)

    # ---- indexes -------------------------------------------------------------------------
    @property
    def _index_path(self) -> str:
        return f"{self._area.index_root}{_seg(self.database.name)}/{_seg(self.name)}/"

    def indexes(self) -> list[dict[str, Any]]:
        """The collection's indexes: ``name``, ``key`` (in order) and options."""
        return list(self._session.json("GET", self._index_path)["indexes"])

    def create_index(
        self,
        keys: IndexKeys,
        *,
        name: Optional[str] = None,
        unique: Optional[bool] = None,
        sparse: Optional[bool] = None,
        expire_after_seconds: Optional[int] = None,
        partial_filter: Optional[Mapping[str, Any]] = None,
    ) -> str:
        """Creates an index (``"field"``, ``{"a": 1}`` or ``[("a", 1), ("b", -1)]``); returns its name."""
        if isinstance(keys, str):
            key_list: list[list[Any]] = [[keys, 1]]
        elif isinstance(keys, Mapping):
            key_list = [[k, v] for k, v in keys.items()]
        else:
            key_list = [[k, v] for k, v in keys]
        body: dict[str, Any] = {"keys": key_list}
        for field, value in (
            ("name", name),
            ("unique", unique),
            ("sparse", sparse),
            ("expireAfterSeconds", expire_after_seconds),
            ("partialFilterExpression", partial_filter),
        ):
            if value is not None:
                body[field] = value
        return str(self._session.json("POST", self._index_path, json=body)["name"])

    def drop_index(self, name: str) -> None:
        self._session.json("DELETE", f"{self._index_path}{_seg(name)}/")

    # ---- exports -------------------------------------------------------------------------
    def export_path(
        self,
        format: str = "csv",
        filter: Optional[Mapping[str, Any]] = None,
        projection: Optional[Mapping[str, Any]] = None,
        sort: SortSpec = None,
        fields: Optional[Sequence[str]] = None,
    ) -> str:
        """The path (with query string) that downloads the whole result in ``format``."""
        if format not in EXPORT_FORMATS:
            raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}")
        params: dict[str, str] = {"format": format}
        query = query_param(filter, projection, sort)
        if query is not None:
            params["query"] = query
        if fields:
            params["fields"] = ",".join(fields)
        if format == "json":
            params["page_size"] = "0"
        return f"{self.path}?{urlencode(params)}"

    def export_url(
        self,
        format: str = "csv",
        *,
        filter: Optional[Mapping[str, Any]] = None,
        projection: Optional[Mapping[str, Any]] = None,
        sort: SortSpec = None,
        fields: Optional[Sequence[str]] = None,
        expires_in: int = 3600,
    ) -> str:
        """A signed link anyone holding it may GET (until it expires) without credentials:
        ``pandas.read_csv(col.export_url())``."""
        path = self.export_path(format, filter, projection, sort, fields)
        answer = self._session.json("POST", "/api/links/", json={"path": path, "expires_in": expires_in})
        return str(answer["url"])

    def export(
        self,
        destination: Any,
        format: str = "csv",
        *,
        filter: Optional[Mapping[str, Any]] = None,
        projection: Optional[Mapping[str, Any]] = None,
        sort: SortSpec = None,
        fields: Optional[Sequence[str]] = None,
    ) -> int:
        """Streams the export into a binary file object; returns the number of bytes written."""
        path = self.export_path(format, filter, projection, sort, fields)
        response = self._session.send("GET", path, stream=True)
        written = 0
        try:
            for chunk in response.iter_bytes():
                destination.write(chunk)
                written += len(chunk)
        finally:
            response.close()
        return written


def _at_least_zero(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number, 0 or more; got {value!r}")
    return value


def _write_filter(filter: Mapping[str, Any]) -> Params:
    """The ``query`` parameter of an update or delete by filter, which always names its filter."""
    if not isinstance(filter, Mapping):
        raise TypeError(f"filter must be a mapping ({{}} matches every record), not {type(filter).__name__}")
    return {"query": orjson.dumps({"filter": ejson.encode(dict(filter))}).decode("utf-8")}


def _create(session: Session, path: str, kind: str, name: str, exist_ok: bool) -> None:
    """Creates a database or collection (POST ``{kind: name}``); 409 is fine with ``exist_ok``."""
    try:
        session.json("POST", path, json={kind: name})
    except CybercomError as exc:
        if not (exist_ok and exc.status == 409):
            raise


def _drop(session: Session, path: str, kind: str, name: str) -> None:
    session.json("POST", path, json={kind: name, "action": "delete"})


class Database:
    """One database: ``area["db"]``; index it for a collection."""

    def __init__(self, area: Area, name: str) -> None:
        self._area = area
        self._session = area._session
        self.name = name
        self.path = f"{area.root}{_seg(name)}/"

    def __repr__(self) -> str:
        return f"<Database {self._area.name}:{self.name}>"

    def __getitem__(self, collection: str) -> Collection:
        return Collection(self, collection)

    def collections(self) -> list[str]:
        return [str(row["collection"]) for row in self._session.results(self.path)]

    def create_collection(self, name: str, *, exist_ok: bool = False) -> Collection:
        _create(self._session, self.path, "collection", name, exist_ok)
        return self[name]

    def drop_collection(self, name: str) -> None:
        _drop(self._session, self.path, "collection", name)

    def drop(self) -> None:
        self._area.drop_database(self.name)

    def exists(self) -> bool:
        try:
            self._session.json("GET", self.path, params={"page_size": 1})
        except NotFound:
            return False
        return True


class Area:
    """The data store or the catalog: ``client.data_store["db"]``."""

    def __init__(self, session: Session, name: str) -> None:
        self._session = session
        self.name = name
        self.root = f"/api/{name}/data/"
        self.index_root = f"/api/{name}/indexes/"
        # Learned on first use: whether the server streams ?format=ndjson, and whether it answers
        # an insert with its count alone (answer=count).
        self._ndjson_supported: Optional[bool] = None
        self._count_answers: Optional[bool] = None

    def __repr__(self) -> str:
        return f"<{self.name} at {self._session.base_url}>"

    def __getitem__(self, database: str) -> Database:
        return Database(self, database)

    def databases(self) -> list[str]:
        return [str(row["database"]) for row in self._session.results(self.root)]

    def create_database(self, name: str, *, exist_ok: bool = False) -> Database:
        _create(self._session, self.root, "database", name, exist_ok)
        return self[name]

    def drop_database(self, name: str) -> None:
        _drop(self._session, self.root, "database", name)
