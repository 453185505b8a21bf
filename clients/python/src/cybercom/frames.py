"""Records -> pandas / Arrow / geopandas, built column by column.

Records are walked once; each field's values go into one list per column (missing fields are
None), and the frame is made from those lists in one step, instead of a dict per row. Records come
in blocks (those of one read of a stream, or one page); a block of parsed JSON whose records all
have the same fields (the usual case) is turned into columns with one call per block, not per value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Optional

from .ejson import ObjectId

if TYPE_CHECKING:
    import pandas
    import pyarrow

#: Records, and whether they are parsed JSON only (no ObjectId, datetime or other value decoded
#: from Extended JSON: see ejson.decode_lines). A record of a block that is not may be any mapping.
RecordBlock = tuple[Iterable[Mapping[str, Any]], bool]


def flatten_record(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects as dotted keys (``{"loc": {"lat": 1}}`` -> ``{"loc.lat": 1}``); arrays stay values."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten_record(value, f"{name}."))
        else:
            out[name] = value
    return out


class _Columns:
    """Column lists in order of first appearance, padded with None, and the row count."""

    def __init__(self, flatten: bool) -> None:
        self.flatten = flatten
        self.columns: dict[str, list[Any]] = {}
        self.rows = 0

    def add_block(self, records: Iterable[Mapping[str, Any]], plain: bool) -> None:
        if plain and type(records) is list and records:
            rows = [flatten_record(r) for r in records] if self.flatten else records
            if self._add_alike(rows):
                return
        for record in records:
            self.add(record)

    def add(self, record: Mapping[str, Any]) -> None:
        columns = self.columns
        rows = self.rows
        row = flatten_record(record) if self.flatten else record
        for key, value in row.items():
            column = columns.get(key)
            if column is None:
                column = columns[key] = [None] * rows
            if type(value) is ObjectId:
                value = str(value)
            column.append(value)
        self.rows = rows = rows + 1
        # A row with every known field (the usual case) filled every column; only a row that
        # lacks some needs the columns searched for the short ones.
        if len(row) != len(columns):
            for column in columns.values():
                if len(column) < rows:
                    column.append(None)

    def _add_alike(self, records: list[Any]) -> bool:
        """Adds dicts of parsed JSON that all have the fields of the first, with one call per
        column; False (nothing added) when they do not."""
        if set(map(type, records)) != {dict}:
            return False
        keys = list(records[0])
        width = len(keys)
        if set(map(len, records)) != {width}:
            return False
        if width == 0:
            values: list[Sequence[Any]] = []
        elif width == 1:
            key = keys[0]
            try:
                values = [[r[key] for r in records]]
            except KeyError:
                return False
        else:
            try:
                # As many fields as the first, each of them: the same fields.
                values = list(zip(*map(itemgetter(*keys), records)))
            except KeyError:
                return False
        columns = self.columns
        rows = self.rows
        for key, column_values in zip(keys, values):
            column = columns.get(key)
            if column is None:
                column = columns[key] = [None] * rows
            column.extend(column_values)
        self.rows = rows = rows + len(records)
        if len(columns) != width:
            for column in columns.values():
                if len(column) < rows:
                    column.extend([None] * (rows - len(column)))
        return True


def columns_of(
    records: Iterable[Mapping[str, Any]], *, flatten: bool = False
) -> tuple[dict[str, list[Any]], int]:
    """Column lists in order of first appearance, padded with None; and the row count."""
    return columns_of_blocks([(records, False)], flatten=flatten)


def columns_of_blocks(
    blocks: Iterable[RecordBlock], *, flatten: bool = False
) -> tuple[dict[str, list[Any]], int]:
    """:func:`columns_of` the records of each block in turn (see :data:`RecordBlock`)."""
    builder = _Columns(flatten)
    for records, plain in blocks:
        builder.add_block(records, plain)
    return builder.columns, builder.rows


def records_to_dataframe(records: Iterable[Mapping[str, Any]], *, flatten: bool = False) -> pandas.DataFrame:
    return blocks_to_dataframe([(records, False)], flatten=flatten)


def blocks_to_dataframe(blocks: Iterable[RecordBlock], *, flatten: bool = False) -> pandas.DataFrame:
    import pandas as pd

    columns, rows = columns_of_blocks(blocks, flatten=flatten)
    if not columns:
        return pd.DataFrame(index=pd.RangeIndex(rows))
    return pd.DataFrame(
        {name: pd.Series(values, dtype=_dtype_of(values)) for name, values in columns.items()}
    )


def _dtype_of(values: list[Any]) -> Optional[str]:
    # Let pandas infer, except for all-None columns (object, not float NaN).
    return "object" if values.count(None) == len(values) else None


def records_to_arrow(records: Iterable[Mapping[str, Any]]) -> Any:
    return blocks_to_arrow([(records, False)])


def blocks_to_arrow(blocks: Iterable[RecordBlock]) -> Any:
    import pyarrow as pa

    columns, _ = columns_of_blocks(blocks)
    arrays = {}
    for name, values in columns.items():
        try:
            arrays[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            # Mixed types in one field: keep every value as its JSON text rather than fail.
            import orjson

            from .ejson import encode

            arrays[name] = pa.array(
                [None if v is None else orjson.dumps(encode(v)).decode("utf-8") for v in values], pa.string()
            )
    return pa.table(arrays)


class FrameConversions:
    """``to_dataframe``, ``to_arrow`` and ``to_geodataframe`` for anything that yields records (a
    find's cursor, an aggregation's results): each reads the records once."""

    def _frame_records(self, progress: bool) -> Iterable[Mapping[str, Any]]:
        """The records, behind a progress bar when ``progress`` and the source can show one."""
        raise NotImplementedError

    def _frame_blocks(self, progress: bool) -> Iterable[RecordBlock]:
        """The records in blocks (see :data:`RecordBlock`); by default one block, not plain."""
        return [(self._frame_records(progress), False)]

    def to_dataframe(self, *, flatten: bool = False, progress: bool = False) -> pandas.DataFrame:
        """A pandas DataFrame (``flatten``: nested objects become dotted columns)."""
        return blocks_to_dataframe(self._frame_blocks(progress), flatten=flatten)

    def to_arrow(self, *, progress: bool = False) -> pyarrow.Table:
        """A pyarrow Table, built column by column."""
        return blocks_to_arrow(self._frame_blocks(progress))

    def to_geodataframe(
        self, *, geometry: Optional[str] = None, crs: str = "EPSG:4326", progress: bool = False
    ) -> Any:
        """A geopandas GeoDataFrame from GeoJSON Features, or from records with a GeoJSON
        ``geometry`` field (``geometry=`` names another field)."""
        return records_to_geodataframe(self._frame_records(progress), geometry=geometry, crs=crs)


def records_to_geodataframe(
    records: Iterable[Mapping[str, Any]], *, geometry: Optional[str] = None, crs: str = "EPSG:4326"
) -> Any:
    """GeoJSON Features (``type: Feature`` with ``geometry`` and ``properties``), or records whose
    ``geometry`` field (default: ``geometry``) holds a GeoJSON geometry."""
    import geopandas
    from shapely.geometry import shape

    rows: list[dict[str, Any]] = []
    shapes: list[Any] = []
    field = geometry or "geometry"
    for record in records:
        if record.get("type") == "Feature" and geometry is None:
            props = dict(record.get("properties") or {})
            if "_id" in record:
                props.setdefault("_id", str(record["_id"]))
            geo = record.get("geometry")
        else:
            props = {k: (str(v) if isinstance(v, ObjectId) else v) for k, v in record.items() if k != field}
            geo = record.get(field)
        rows.append(props)
        shapes.append(shape(geo) if geo else None)
    columns, _ = columns_of(rows)
    return geopandas.GeoDataFrame(columns, geometry=shapes, crs=crs)
