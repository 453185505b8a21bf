"""What the collection methods that are not lazy reads answer: the counts of writes by filter (with
pymongo's names, so code written for ``UpdateResult``/``DeleteResult`` reads them unchanged), and
aggregation results, a list that also turns into a DataFrame, Arrow table or GeoDataFrame."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .frames import FrameConversions


@dataclass(frozen=True)
class UpdateResult:
    """What :meth:`~cybercom.Collection.update_many` did: the records its filter matched, and those
    the update changed (a ``$set`` to the value a record holds already matches it, unchanged)."""

    matched_count: int
    modified_count: int


@dataclass(frozen=True)
class DeleteResult:
    """What :meth:`~cybercom.Collection.delete_many` did: the records it removed."""

    deleted_count: int


class RecordList(list[dict[str, Any]], FrameConversions):
    """A list of records (what :meth:`~cybercom.Collection.aggregate` answers), with
    ``to_dataframe()``, ``to_arrow()`` and ``to_geodataframe()`` as on a find's cursor. The records
    are in memory already, so ``progress`` shows nothing here."""

    def _frame_records(self, progress: bool) -> Iterable[Mapping[str, Any]]:
        return self
