"""cybercom.celery: what a worker answers to `cybercom_task_info` (no broker needed).

Plain unittest, so it runs under pytest and under `python -m unittest` in the interop tests'
Celery virtualenvs (Celery 5.2 and the newest 5.x) alike.
"""

import datetime
import inspect
import json
import unittest

from cybercom import celery as extension


def plain(x, y=1, *, scale: float = 1.0):
    """Scale a sum.

    Indented second paragraph.
    """


def everything(a, /, b: "list[int]", *rest, when=datetime.date(2024, 1, 2), **options) -> dict:
    pass


class DescribeSignatureTest(unittest.TestCase):
    def test_names_kinds_defaults_and_annotations(self):
        described = extension.describe_signature(plain)
        self.assertEqual(described["text"], "(x, y=1, *, scale: float = 1.0)")
        self.assertEqual(
            described["parameters"],
            [
                {"name": "x", "kind": "positional_or_keyword"},
                {"name": "y", "kind": "positional_or_keyword", "default": 1},
                {"name": "scale", "kind": "keyword_only", "default": 1.0, "annotation": "float"},
            ],
        )

    def test_every_kind_string_annotations_and_a_default_that_is_not_json(self):
        described = extension.describe_signature(everything)
        self.assertEqual(
            described["text"],
            "(a, /, b: list[int], *rest, when=datetime.date(2024, 1, 2), **options) -> dict",
        )
        self.assertEqual(
            described["parameters"],
            [
                {"name": "a", "kind": "positional_only"},
                {"name": "b", "kind": "positional_or_keyword", "annotation": "list[int]"},
                {"name": "rest", "kind": "var_positional"},
                {"name": "when", "kind": "keyword_only", "default_repr": "datetime.date(2024, 1, 2)"},
                {"name": "options", "kind": "var_keyword"},
            ],
        )

    def test_json_defaults_are_sent_as_json_would_carry_them(self):
        def f(a=(1, "two"), b=None, c={"k": [True]}, d=float("nan"), e="text"):  # noqa: B006
            pass

        parameters = extension.describe_signature(f)["parameters"]
        self.assertEqual(
            [p.get("default", p.get("default_repr")) for p in parameters],
            [[1, "two"], None, {"k": [True]}, "nan", "text"],
        )
        self.assertEqual([("default_repr" in p) for p in parameters], [False, False, False, True, False])
        json.dumps(parameters, allow_nan=False)  # the reply itself is plain JSON

    def test_no_signature_when_python_cannot_tell(self):
        def opaque():
            pass

        opaque.__signature__ = "not a signature"  # inspect.signature raises TypeError
        self.assertIsNone(extension.describe_signature(opaque))


class TaskInfoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from celery import Celery, Task

        cls.app = Celery("signatures-test", set_as_current=False)

        @cls.app.task(name="t.plain", shared=False)
        def plain_task(x, y=1, *, scale: float = 1.0):
            """Scale a sum.

            Second paragraph.
            """

        @cls.app.task(name="t.bound", bind=True, shared=False)
        def bound_task(self, item_id: int):
            """Uses self.request."""

        @cls.app.task(name="t.nodoc", description="Only a description.", shared=False)
        def nodoc_task():
            pass

        class ClassBased(Task):
            """A class-based task."""

            name = "t.class_based"

            def run(self, path, mode="r"):
                return path

        cls.app.register_task(ClassBased())

    def test_reply_lists_every_task_but_celery_builtins(self):
        reply = extension.task_infos(self.app)
        self.assertEqual(reply["version"], 1)
        self.assertEqual(sorted(reply["tasks"]), ["t.bound", "t.class_based", "t.nodoc", "t.plain"])
        self.assertTrue(any(name.startswith("celery.") for name in self.app.tasks))
        json.dumps(reply, allow_nan=False)

    def test_docstring_is_cleaned_and_absent_docs_are_none(self):
        tasks = extension.task_infos(self.app)["tasks"]
        self.assertEqual(tasks["t.plain"]["doc"], "Scale a sum.\n\nSecond paragraph.")
        self.assertIsNone(tasks["t.nodoc"]["doc"])
        self.assertEqual(tasks["t.class_based"]["doc"], "A class-based task.")

    def test_bound_and_class_based_tasks_leave_self_out(self):
        tasks = extension.task_infos(self.app)["tasks"]
        self.assertEqual(tasks["t.plain"]["signature"]["text"], "(x, y=1, *, scale: float = 1.0)")
        self.assertEqual(tasks["t.bound"]["signature"]["text"], "(item_id: int)")
        self.assertEqual(
            tasks["t.class_based"]["signature"]["parameters"][0],
            {"name": "path", "kind": "positional_or_keyword"},
        )
        self.assertEqual(tasks["t.nodoc"]["signature"], {"text": "()", "parameters": []})


class InstallTest(unittest.TestCase):
    def test_registers_an_inspect_command_that_answers_for_the_workers_app(self):
        from celery import Celery
        from celery.worker.control import Panel

        app = Celery("install-test", set_as_current=False)

        @app.task(name="i.add", shared=False)
        def add(x, y):
            """Add."""

        extension.install(app)
        extension.install(app)  # idempotent
        handler = Panel.data[extension.COMMAND]
        self.assertEqual(Panel.meta[extension.COMMAND].type, "inspect")

        class State:  # what the worker's pidbox hands a command
            pass

        state = State()
        state.app = app
        self.assertEqual(
            handler(state)["tasks"],
            {"i.add": {"doc": "Add.", "signature": extension.describe_signature(add.run)}},
        )
        self.assertEqual(handler(state)["tasks"]["i.add"]["signature"]["text"], "(x, y)")

    def test_refuses_something_that_is_not_an_app(self):
        with self.assertRaises(TypeError):
            extension.install(object())


class ImportTest(unittest.TestCase):
    def test_module_does_not_import_celery_until_used(self):
        source = inspect.getsource(extension)
        top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
        self.assertFalse([line for line in top_level if "celery" in line], top_level)


if __name__ == "__main__":
    unittest.main()
