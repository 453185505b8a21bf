"""A Python client for a cybercom service: data store, catalog and task queue.

>>> from cybercom import Client
>>> client = Client("https://cybercom.example.org", token="...")
>>> df = client.data_store["weather"]["stations"].find({"elev": {"$gt": 300}}).to_dataframe()
"""

from ._version import __version__
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
from .retry import RetryPolicy
from .tasks import TaskInfo, TaskRun, Tasks

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
    "Regex",
    "RetryPolicy",
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
    "__version__",
]
