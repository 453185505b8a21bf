"""Tasks with richer signatures, loaded with the cybercom.celery extension (INTEROP_CYBERCOM_EXTENSION=1)."""

import datetime

from interop_app import app


@app.task(name="interop.scale", bind=True)
def scale(self, values: list, factor: float = 2.0, *, label="scaled", since=datetime.date(2024, 1, 2)):
    """Multiply each value by factor.

    Returns the label with the scaled values.
    """
    return {"label": label, "values": [v * factor for v in values]}
