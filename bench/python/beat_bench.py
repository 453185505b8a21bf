"""celery beat with the schedules benchmark's entries, for `npm run bench:schedules`.

The interop tests' app (test/support/celery/interop_app.py: the broker over TLS, configured from
the environment) with a beat_schedule of BEAT_ENTRIES entries, each `crontab()` (every minute)
sending the task BEAT_TASK to the queue BEAT_QUEUE, as a lab's beat would hold them. Run as
`celery -A beat_bench beat`.
"""

import os

from celery.schedules import crontab
from interop_app import app

entries = int(os.environ["BEAT_ENTRIES"])
queue = os.environ["BEAT_QUEUE"]
task = os.environ.get("BEAT_TASK", "tasks.noop")

app.conf.timezone = "UTC"
app.conf.beat_schedule = {
    f"bench-{i}": {"task": task, "schedule": crontab(), "options": {"queue": queue}} for i in range(entries)
}
