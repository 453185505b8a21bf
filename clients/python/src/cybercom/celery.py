"""Task documentation and signatures for the cybercom API's task catalog.

Enable it in the worker's Celery app with one line::

    import cybercom.celery
    cybercom.celery.install(app)

``install`` registers the remote-control command ``cybercom_task_info`` (Celery's documented
``inspect_command`` API, available in every Celery 5 release). The API broadcasts it when it builds
its task list, and each worker that loaded this module answers with every registered task's
docstring and call signature, so the catalog can show them and offer one form field per
parameter. Stock ``inspect registered`` cannot do this: Celery 5.3 and later refuse to send
``__doc__``, and no version sends a signature.

Celery is imported only inside ``install`` and ``query``: the rest of this module (and the
``cybercom`` package) works without it.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable, Dict, List, Optional

COMMAND = "cybercom_task_info"
"""The remote-control command's name, as the API broadcasts it."""

FORMAT_VERSION = 1
"""Version of the reply's shape; the API ignores replies of versions it does not know."""

_KIND_NAMES = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


class _Verbatim:
    """Shown as its text by ``str(signature)``: string annotations appear without quotes."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def annotation_text(annotation: Any) -> Optional[str]:
    """An annotation as source-like text (``float``, ``list[int]``); None when there is none."""
    if annotation is inspect.Parameter.empty:
        return None
    if isinstance(annotation, str):
        # `from __future__ import annotations` leaves every annotation as its source text.
        return annotation
    return inspect.formatannotation(annotation)


def _json_value(value: Any) -> tuple[bool, Any]:
    """(True, value as JSON would carry it) when `value` survives JSON, else (False, None)."""
    try:
        return True, json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return False, None


def describe_parameter(parameter: inspect.Parameter) -> Dict[str, Any]:
    """One parameter: name, kind, and the default and annotation when it has them.

    A default that is not JSON (a datetime, an object) is sent as ``default_repr``, its
    ``repr()`` text, so a caller can tell it from a string default.
    """
    described: Dict[str, Any] = {"name": parameter.name, "kind": _KIND_NAMES[parameter.kind]}
    if parameter.default is not inspect.Parameter.empty:
        is_json, value = _json_value(parameter.default)
        if is_json:
            described["default"] = value
        else:
            described["default_repr"] = repr(parameter.default)
    annotation = annotation_text(parameter.annotation)
    if annotation is not None:
        described["annotation"] = annotation
    return described


def describe_signature(function: Callable[..., Any]) -> Optional[Dict[str, Any]]:
    """``{"text": "(x, y=1)", "parameters": [...]}`` for `function`, or None when Python cannot tell."""
    try:
        signature = inspect.signature(function)
    except Exception:
        return None
    shown = signature.replace(
        parameters=[
            p.replace(annotation=_Verbatim(text))
            if (text := annotation_text(p.annotation)) is not None
            else p
            for p in signature.parameters.values()
        ],
        return_annotation=(
            _Verbatim(text)
            if (text := annotation_text(signature.return_annotation)) is not None
            else inspect.Signature.empty
        ),
    )
    return {
        "text": str(shown),
        "parameters": [describe_parameter(p) for p in signature.parameters.values()],
    }


def task_info(task: Any) -> Dict[str, Any]:
    """A task's docstring (cleaned of indentation) and the signature of its ``run``.

    ``task.run`` of a task declared with ``bind=True`` (or a class-based task) is a bound
    method, so ``self`` is not part of the signature: it is not something a caller sends.
    """
    doc = task.__doc__
    run = getattr(task, "run", None)
    return {
        "doc": inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else None,
        "signature": describe_signature(run) if callable(run) else None,
    }


def task_infos(app: Any) -> Dict[str, Any]:
    """The command's reply for `app`: every registered task except Celery's own ``celery.*``."""
    tasks = {
        name: task_info(app.tasks[name])
        for name in sorted(app.tasks.keys())
        if not name.startswith("celery.")
    }
    return {"version": FORMAT_VERSION, "tasks": tasks}


def _cybercom_task_info(state: Any, **_arguments: Any) -> Dict[str, Any]:
    """Docstrings and signatures of this worker's tasks (cybercom task catalog)."""
    return task_infos(state.app)


def install(app: Any = None) -> None:
    """Makes the worker of `app` answer ``cybercom_task_info``.

    Celery keeps remote-control commands in one registry per process and hands each command
    the worker's own app (``state.app``), so one call covers every app in the process; calling
    it again changes nothing. `app` is accepted so the line reads as what it does in the app's
    module, and checked to be a Celery app so a mistake shows at start-up.
    """
    from celery.worker.control import inspect_command

    if app is not None and not hasattr(app, "tasks"):
        raise TypeError(f"install() expects a Celery app, got {type(app).__name__}")
    inspect_command(name=COMMAND)(_cybercom_task_info)


def query(app: Any, timeout: float = 1.0, destination: Optional[List[str]] = None) -> Dict[str, Any]:
    """Asks the workers (all, or the named ones) for their task info: ``{node: reply}``.

    Workers without the extension answer ``{"error": "KeyError('cybercom_task_info')"}``.
    """
    replies = app.control.broadcast(COMMAND, reply=True, timeout=timeout, destination=destination)
    merged: Dict[str, Any] = {}
    for reply in replies or []:
        merged.update(reply)
    return merged
