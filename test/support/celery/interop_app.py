"""Celery app for the interop tests, configured only from the environment.

It talks to the same TLS RabbitMQ and MongoDB-wire server as the TypeScript side, with the
settings a real deployment would use: broker_use_ssl with a client certificate, the mongodb://
result backend with TLS options, the JSON serializer, and the test's own queue and collection.

Environment: INTEROP_BROKER_URL BROKER_USERNAME BROKER_PASSWORD BROKER_TLS_CA_FILE BROKER_TLS_CERT_FILE
BROKER_TLS_KEY_FILE MONGO_URI MONGO_USERNAME MONGO_PASSWORD MONGO_AUTH_SOURCE MONGO_TLS_CA_FILE
MONGO_TLS_CERT_KEY_FILE RESULT_DATABASE RESULT_COLLECTION INTEROP_QUEUE, INTEROP_QUEUE_TYPE (Celery >= 5.5:
task_default_queue_type, e.g. quorum; unset: Celery's default, classic), and INTEROP_CYBERCOM_EXTENSION
(1: the app loads the cybercom.celery extension, as a researcher's app would with one line, and
the tasks of signature_tasks.py; needs clients/python/src on PYTHONPATH)
(The broker URL has its own name because the `celery` command line reads BROKER_URL as the
value of its --broker option, which would replace the URL built here, credentials and all.)
"""

import os
import ssl
from urllib.parse import quote, urlsplit, urlunsplit

from celery import Celery


def _broker_url() -> str:
    parts = urlsplit(os.environ["INTEROP_BROKER_URL"])
    user = quote(os.environ.get("BROKER_USERNAME", ""), safe="")
    password = quote(os.environ.get("BROKER_PASSWORD", ""), safe="")
    credentials = f"{user}:{password}@" if user else ""
    # kombu's py-amqp transport takes amqps:// plus broker_use_ssl for the TLS material.
    return urlunsplit((parts.scheme, f"{credentials}{parts.hostname}:{parts.port}", parts.path, "", ""))


queue = os.environ.get("INTEROP_QUEUE", "celery")

with_extension = os.environ.get("INTEROP_CYBERCOM_EXTENSION") == "1"

app = Celery("interop", include=["interop_tasks", "signature_tasks"] if with_extension else ["interop_tasks"])
app.conf.update(
    broker_url=_broker_url(),
    broker_use_ssl={
        "ca_certs": os.environ["BROKER_TLS_CA_FILE"],
        "certfile": os.environ["BROKER_TLS_CERT_FILE"],
        "keyfile": os.environ["BROKER_TLS_KEY_FILE"],
        "cert_reqs": ssl.CERT_REQUIRED,
    },
    result_backend=os.environ["MONGO_URI"],
    mongodb_backend_settings={
        "database": os.environ.get("RESULT_DATABASE", "cybercom"),
        "taskmeta_collection": os.environ.get("RESULT_COLLECTION", "tombstone"),
        "user": os.environ.get("MONGO_USERNAME"),
        "password": os.environ.get("MONGO_PASSWORD"),
        "options": {
            "authSource": os.environ.get("MONGO_AUTH_SOURCE", "admin"),
            "tls": True,
            "tlsCAFile": os.environ["MONGO_TLS_CA_FILE"],
            "tlsCertificateKeyFile": os.environ["MONGO_TLS_CERT_KEY_FILE"],
            "serverSelectionTimeoutMS": 10000,
        },
    },
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_default_queue=queue,
    task_default_exchange=queue,
    task_default_routing_key=queue,
    task_create_missing_queues=True,
    worker_hijack_root_logger=False,
    broker_connection_retry_on_startup=True,
)

if os.environ.get("INTEROP_QUEUE_TYPE"):
    app.conf.task_default_queue_type = os.environ["INTEROP_QUEUE_TYPE"]

if with_extension:
    import cybercom.celery

    cybercom.celery.install(app)

# The service's worker conventions, as `cybercom worker` sets them (late acknowledgement, one
# message per process, extended results, task events): the queue benchmark's hand-configured
# worker with the same settings, so that comparing the two measures the configuration's wiring
# and not the conventions themselves.
if os.environ.get("INTEROP_SERVICE_CONVENTIONS") == "1":
    app.conf.update(
        task_acks_late=True,
        worker_prefetch_multiplier=1,
        result_extended=True,
        worker_send_task_events=True,
        task_send_sent_event=True,
    )
