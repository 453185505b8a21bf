import time
import uuid
from typing import Any

import pytest

from cybercom import Client, NotFound, TaskFailed, TaskTimeout


def test_catalog_lists_both_workers_tasks_with_docs(client: Client, queues: dict[str, Any]) -> None:
    tasks = {t.name: t for t in client.tasks.catalog(refresh=True)}
    assert tasks["tasks.add"].docstring == "Add two numbers."
    assert queues["ts"] in tasks["tasks.add"].queues
    assert queues["py"] in tasks["interop.add"].queues
    assert "tasks.add" in repr(client.tasks)


@pytest.mark.server_feature("signatures")
def test_catalog_carries_signatures(client: Client) -> None:
    # Each worker answers the catalog's broadcasts within the server's reply window; on a busy
    # machine the Python worker may answer the task list in time and the signatures just after
    # it, so the catalog is asked anew (a few times at most) until its answer carries them.
    add = client.tasks["interop.add"]
    deadline = time.monotonic() + 20
    while add.signature is None and time.monotonic() < deadline:
        time.sleep(1)
        add = next(t for t in client.tasks.catalog(refresh=True) if t.name == "interop.add")
    assert add.signature is not None
    assert [p["name"] for p in add.signature["parameters"]] == ["x", "y"]
    assert add.help().startswith("interop.add(x, y)")


def test_submit_with_wait_returns_the_result(client: Client, queues: dict[str, Any]) -> None:
    run = client.tasks.submit("tasks.add", 2, 3, queue=queues["ts"], wait=20)
    assert run.state == "SUCCESS"
    assert run.result() == 5


def test_python_worker_result_by_polling(client: Client, queues: dict[str, Any]) -> None:
    run = client.tasks.submit("interop.add", 20, 22, queue=queues["py"])
    assert run.id
    assert run.result(timeout=60) == 42
    assert run.status == "SUCCESS"
    assert client.tasks.run("interop.add", 1, 1, queue=queues["py"], timeout=60) == 2


@pytest.mark.parametrize(
    ("task", "queue", "exc_type"), [("tasks.fail", "ts", "Exception"), ("interop.fail", "py", "ValueError")]
)
def test_failures_are_reraised_with_type_message_and_traceback(
    client: Client, queues: dict[str, Any], task: str, queue: str, exc_type: str
) -> None:
    run = client.tasks.submit(task, "boom here", queue=queues[queue])
    with pytest.raises(TaskFailed) as caught:
        run.result(timeout=60)
    err = caught.value
    assert err.exc_type == exc_type
    assert err.message == "boom here"
    assert err.task_id == run.id
    assert err.traceback and "boom here" in err.traceback


def test_timeout_then_revoke_with_terminate(client: Client, queues: dict[str, Any]) -> None:
    run = client.tasks.submit("tasks.sleep", 30, queue=queues["ts"])
    with pytest.raises(TaskTimeout):
        run.result(timeout=0.5)
    assert run.revoke(terminate=True) == "REVOKED"
    with pytest.raises(TaskFailed) as caught:
        run.result(timeout=10)
    assert caught.value.state == "REVOKED"


def test_history_filters_by_tag_task_and_status(client: Client, queues: dict[str, Any]) -> None:
    tag = f"t{uuid.uuid4().hex[:8]}"
    first = client.tasks.submit("tasks.add", 1, 2, queue=queues["ts"], tags=[tag], wait=20)
    second = client.tasks.submit("tasks.fail", "x", queue=queues["ts"], tags=[tag])
    with pytest.raises(TaskFailed):
        second.result(timeout=30)
    runs = list(client.tasks.history(tag=tag))
    assert [r.id for r in runs] == [second.id, first.id]  # newest first
    assert [r.id for r in client.tasks.history(tag=tag, status="SUCCESS")] == [first.id]
    assert [r.id for r in client.tasks.history(tag=tag, task="tasks.fail")] == [second.id]
    assert client.tasks.get(first.id).result() == 3


def test_unknown_task_and_run_are_not_found(client: Client) -> None:
    with pytest.raises(NotFound):
        client.tasks.submit("tasks.no_such_task")
    with pytest.raises(NotFound):
        client.tasks.get("no-such-run")
