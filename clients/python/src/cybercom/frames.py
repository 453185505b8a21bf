"""Records -> pandas / Arrow / geopandas, built column by column.

Records are walked once; each field's values go into one list per column (missing fields are
None), and the frame is made from those lists in one step, instead of a dict per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Optional

from .ejson import ObjectId

if TYPE_CHECKING:
    import pandas
    import pyarrow


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


def columns_of(
    records: Iterable[Mapping[str, Any]], *, flatten: bool = False
) -> tuple[dict[str, list[Any]], int]:
    """Column lists in order of first appearance, padded with None; and the row count."""
    columns: dict[str, list[Any]] = {}
    rows = 0
    for record in records:
        row = flatten_record(record) if flatten else record
        for key, value in row.items():
            column = columns.get(key)
            if column is None:
                column = columns[key] = [None] * rows
            if type(value) is ObjectId:
                value = str(value)
            column.append(value)
        rows += 1
        # A row with every known field (the usual case) filled every column; only a row that
        # lacks some needs the columns searched for the short ones.
        if len(row) != len(columns):
            for column in columns.values():
                if len(column) < rows:
                    column.append(None)
    return columns, rows


def records_to_dataframe(records: Iterable[Mapping[str, Any]], *, flatten: bool = False) -> pandas.DataFrame:
    import pandas as pd

    columns, rows = columns_of(records, flatten=flatten)
    if not columns:
        return pd.DataFrame(index=pd.RangeIndex(rows))
    return pd.DataFrame(
        {name: pd.Series(values, dtype=_dtype_of(values)) for name, values in columns.items()}
    )


def _dtype_of(values: list[Any]) -> Optional[str]:
    # Let pandas infer, except for all-None columns (object, not float NaN).
    return "object" if values.count(None) == len(values) else None


def records_to_arrow(records: Iterable[Mapping[str, Any]]) -> Any:
    import pyarrow as pa

    columns, _ = columns_of(records)
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
    find's cursor, an aggregation's results): each walks :meth:`_frame_records` once."""

    def _frame_records(self, progress: bool) -> Iterable[Mapping[str, Any]]:
        """The records, behind a progress bar when ``progress`` and the source can show one."""
        raise NotImplementedError

    def to_dataframe(self, *, flatten: bool = False, progress: bool = False) -> pandas.DataFrame:
        """A pandas DataFrame (``flatten``: nested objects become dotted columns)."""
        return records_to_dataframe(self._frame_records(progress), flatten=flatten)

    def to_arrow(self, *, progress: bool = False) -> pyarrow.Table:
        """A pyarrow Table, built column by column."""
        return records_to_arrow(self._frame_records(progress))

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
