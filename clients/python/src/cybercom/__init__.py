"""A Python client for a cybercom service: data store, catalog and task queue.

>>> from cybercom import Client
>>> client = Client("https://cybercom.example.org", token="...")
>>> df = client.data_store["weather"]["stations"].find({"elev": {"$gt": 300}}).to_dataframe()
"""

# The names below are imported on first use (PEP 562), so a Celery worker that loads only
# cybercom.celery never imports the HTTP client or its dependencies.

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .client import Client
    from .data_store import Area, Collection, Cursor, Database, InsertError
    from .ejson import MaxKey, MinKey, ObjectId, Regex, Timestamp
    from .errors import (
        AuthenticationFailed,
        BadRequest,
        Conflict,
        CybercomError,
        InvalidName,
        InvalidQuery,
        MethodNotAllowed,
        NotFound,
        PayloadTooLarge,
        PermissionDenied,
        ProtocolError,
        QueryTimeout,
        QueryTooLong,
        ServerError,
        ServiceUnavailable,
        TaskFailed,
        TaskTimeout,
        Throttled,
        UnsupportedMediaType,
    )
    from .results import DeleteResult, RecordList, UpdateResult
    from .retry import RetryPolicy
    from .schedules import Schedule, Schedules
    from .tasks import TaskInfo, TaskRun, Tasks

_MODULE_OF = {
    "Area": "data_store",
    "AuthenticationFailed": "errors",
    "BadRequest": "errors",
    "Client": "client",
    "Schedule": "schedules",
    "Schedules": "schedules",
    "Collection": "data_store",
    "Conflict": "errors",
    "Cursor": "data_store",
    "CybercomError": "errors",
    "Database": "data_store",
    "DeleteResult": "results",
    "InsertError": "data_store",
    "InvalidName": "errors",
    "InvalidQuery": "errors",
    "MaxKey": "ejson",
    "MethodNotAllowed": "errors",
    "MinKey": "ejson",
    "NotFound": "errors",
    "ObjectId": "ejson",
    "PayloadTooLarge": "errors",
    "PermissionDenied": "errors",
    "ProtocolError": "errors",
    "RecordList": "results",
    "QueryTimeout": "errors",
    "QueryTooLong": "errors",
    "Regex": "ejson",
    "RetryPolicy": "retry",
    "ServerError": "errors",
    "ServiceUnavailable": "errors",
    "TaskFailed": "errors",
    "TaskInfo": "tasks",
    "TaskRun": "tasks",
    "TaskTimeout": "errors",
    "Tasks": "tasks",
    "Throttled": "errors",
    "Timestamp": "ejson",
    "UnsupportedMediaType": "errors",
    "UpdateResult": "results",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "Area",
    "AuthenticationFailed",
    "BadRequest",
    "Client",
    "Collection",
    "Conflict",
    "Cursor",
    "CybercomError",
    "Database",
    "DeleteResult",
    "InsertError",
    "InvalidName",
    "InvalidQuery",
    "MaxKey",
    "MethodNotAllowed",
    "MinKey",
    "NotFound",
    "ObjectId",
    "PayloadTooLarge",
    "PermissionDenied",
    "ProtocolError",
    "QueryTimeout",
    "QueryTooLong",
    "RecordList",
    "Regex",
    "RetryPolicy",
    "Schedule",
    "Schedules",
    "ServerError",
    "ServiceUnavailable",
    "TaskFailed",
    "TaskInfo",
    "TaskRun",
    "TaskTimeout",
    "Tasks",
    "Throttled",
    "Timestamp",
    "UnsupportedMediaType",
    "UpdateResult",
    "__version__",
]
