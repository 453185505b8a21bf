"""Progress bars (tqdm), shown on a terminal or in a notebook."""

from __future__ import annotations

from typing import Any


def progress_bar(iterable: Any = None, **kwargs: Any) -> Any:
    from tqdm.auto import tqdm

    return tqdm(iterable, **kwargs)
