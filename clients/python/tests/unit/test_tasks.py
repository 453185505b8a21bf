import pytest

from cybercom import TaskFailed, TaskTimeout
from cybercom.tasks import wait_param

from .recorded import body_of, envelope, error_response, json_response, make_client

SIGNATURE = {
    "text": "(x, y=1, *, scale: float = 1.0)",
    "parameters": [
        {"name": "x", "kind": "positional_or_keyword"},
        {"name": "y", "kind": "positional_or_keyword", "default": 1},
        {"name": "scale", "kind": "keyword_only", "default": 1.0, "annotation": "float"},
    ],
}


def test_catalog_with_docs_and_signatures() -> None:
    rows = [
        {"name": "tasks.add", "docstring": "Adds.", "queues": ["celery"], "url": "u", "signature": SIGNATURE},
        {"name": "tasks.old", "docstring": None, "queues": ["q"], "url": "u"},
    ]
    client, _ = make_client(lambda r: json_response(200, envelope(rows, 1, 1, 500, 2)))
    tasks = client.tasks.catalog()
    assert [t.name for t in tasks] == ["tasks.add", "tasks.old"]
    assert tasks[0].help() == "tasks.add(x, y=1, *, scale: float = 1.0)\n    Adds."
    assert tasks[1].signature is None and tasks[1].help() == "tasks.old(...)"
    assert client.tasks["tasks.old"].queues == ["q"]
    with pytest.raises(KeyError):
        client.tasks["nope"]


def test_submit_sends_args_kwargs_queue_tags_and_wait() -> None:
    def handler(request):  # type: ignore[no-untyped-def]
        assert request.url.path == "/api/queue/run/tasks.add/"
        assert request.url.params["wait"] == "5"
        assert body_of(request) == {
            "function": "tasks.add",
            "args": [2, 3],
            "kwargs": {"scale": 2, "queue": "not-an-option"},
            "queue": "celery",
            "tags": ["demo"],
        }
        return json_response(200, {"task_id": "t1", "status": "SUCCESS", "result": 10, "result_url": "u"})

    client, _ = make_client(handler)
    run = client.tasks.submit(
        "tasks.add",
        2,
        3,
        queue="celery",
        tags=["demo"],
        wait=5,
        scale=2,
        task_kwargs={"queue": "not-an-option"},
    )
    assert (run.id, run.status, run.result()) == ("t1", "SUCCESS", 10)


def test_result_polls_until_done() -> None:
    states = iter(["PENDING", "STARTED", "SUCCESS"])

    def handler(request):  # type: ignore[no-untyped-def]
        if request.method == "POST":
            return json_response(202, {"task_id": "t2", "status": "PENDING", "result_url": "u"})
        state = next(states)
        return json_response(
            200,
            {
                "task_id": "t2",
                "task_name": "tasks.add",
                "status": state,
                "result": 5 if state == "SUCCESS" else None,
            },
        )

    client, recorder = make_client(handler)
    client.tasks._sleep = lambda _s: None
    run = client.tasks.submit("tasks.add", 2, 3)
    assert run.result(timeout=30) == 5
    assert [r.url.path for r in recorder.requests[1:]] == ["/api/queue/task/t2/"] * 3


def test_result_long_polls_the_run_page_without_sleeping_between_held_answers() -> None:
    now = [0.0]
    states = iter(["STARTED", "STARTED", "SUCCESS"])

    def handler(request):  # type: ignore[no-untyped-def]
        if request.method == "POST":
            return json_response(202, {"task_id": "t6", "status": "PENDING", "result_url": "u"})
        state = next(states)
        if state != "SUCCESS":
            now[0] += float(request.url.params["wait"])  # held for as long as asked
        return json_response(
            200, {"task_id": "t6", "status": state, "result": 7 if state == "SUCCESS" else None}
        )

    client, recorder = make_client(handler)
    client.tasks._clock = lambda: now[0]
    slept: list[float] = []
    client.tasks._sleep = slept.append
    run = client.tasks.submit("tasks.add", 3, 4)
    assert run.result(timeout=25) == 7
    assert [r.url.params.get("wait") for r in recorder.requests[1:]] == ["10", "10", "5"]
    assert slept == []


def test_result_polls_a_server_that_cannot_hold_the_run_page() -> None:
    states = iter(["STARTED", "SUCCESS", "STARTED", "SUCCESS"])

    def handler(request):  # type: ignore[no-untyped-def]
        if request.method == "POST":
            return json_response(202, {"task_id": "t7", "status": "PENDING", "result_url": "u"})
        if "wait" in request.url.params:
            return error_response(400, "unknown_parameter", 'Unknown query parameter "wait".')
        return json_response(200, {"task_id": "t7", "status": next(states), "result": 1})

    client, recorder = make_client(handler)
    slept: list[float] = []
    client.tasks._sleep = slept.append
    assert client.tasks.submit("tasks.add", 0, 1).result(timeout=30) == 1
    assert slept == [0.2]
    # Remembered: the next run polls at once.
    assert client.tasks.submit("tasks.add", 0, 1).result(timeout=30) == 1
    waits = [r.url.params.get("wait") for r in recorder.requests if r.method == "GET"]
    assert waits == ["10", None, None, None, None]


def test_result_reraises_the_task_failure() -> None:
    failure = {
        "task_id": "t3",
        "status": "FAILURE",
        "result": None,
        "error": {"type": "ValueError", "message": ["boom"]},
        "traceback": "Traceback ...\nValueError: boom",
    }
    client, _ = make_client(lambda r: json_response(200, failure))
    run = client.tasks.get("t3")
    with pytest.raises(TaskFailed) as caught:
        run.result()
    err = caught.value
    assert (err.exc_type, err.message, err.task_id) == ("ValueError", "boom", "t3")
    assert err.traceback is not None and "ValueError: boom" in err.traceback
    assert str(err) == "ValueError: boom (task t3)"


def test_result_times_out_without_cancelling() -> None:
    now = [0.0]
    client, _ = make_client(lambda r: json_response(200, {"task_id": "t4", "status": "STARTED"}))
    client.tasks._clock = lambda: now[0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    client.tasks._sleep = sleep
    with pytest.raises(TaskTimeout):
        client.tasks.get("t4").result(timeout=1.0)
    assert now[0] == pytest.approx(1.0)


def test_revoke_and_history() -> None:
    def handler(request):  # type: ignore[no-untyped-def]
        if request.url.path.endswith("/revoke/"):
            assert body_of(request) == {"terminate": True}
            return json_response(200, {"task_id": "t5", "status": "REVOKED", "error": None})
        assert request.url.params["status"] == "SUCCESS"
        assert request.url.params["taskname"] == "a,b"
        assert request.url.params["tag"] == "demo"
        return json_response(
            200, envelope([{"task_id": "h1", "task_name": "a", "status": "SUCCESS"}], 1, 1, 100, 1)
        )

    client, _ = make_client(handler)
    from cybercom.tasks import TaskRun

    run = TaskRun("t5", client.tasks)
    assert run.revoke(terminate=True) == "REVOKED"
    with pytest.raises(TaskFailed) as caught:
        run.result()
    assert caught.value.state == "REVOKED"
    runs = list(client.tasks.history(status="SUCCESS", task=["a", "b"], tag="demo"))
    assert [(r.id, r.name, r.state) for r in runs] == [("h1", "a", "SUCCESS")]


@pytest.mark.parametrize(
    ("seconds", "text"), [(10, "10"), (2.5, "2.5"), (30.0, "30"), (1e-5, "0"), (0.0004, "0")]
)
def test_wait_param_is_plain_decimal(seconds: float, text: str) -> None:
    assert wait_param(seconds) == text
