"""Tasks the Python worker offers in the interop tests (names share the `interop.` prefix)."""

from interop_app import app


@app.task(name="interop.add")
def add(x, y):
    """Add two numbers."""
    return x + y


@app.task(name="interop.fail")
def fail(message):
    """Always raise ValueError with the given message."""
    raise ValueError(message)


@app.task(name="interop.whoami", bind=True)
def whoami(self):
    """Return the user named in the authenticated_user header."""
    return self.request.authenticated_user


# No docstring, but a description: newer Celery workers send that attribute, never `__doc__`.
@app.task(name="interop.nodoc", description="Described by its description attribute.")
def nodoc():
    return None


@app.task(name="interop.noop")
def noop():
    """Do nothing (used by the queue benchmark)."""
    return None
