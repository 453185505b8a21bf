"""cybercom worker's settings and Celery configuration, from an env file, a bundle and the environment
(no broker needed: the Celery app is configured, never connected)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cybercom import worker
from cybercom.worker_settings import SettingsError, load_settings, read_env_file

SERVICE_ENV = {
    "BROKER_URL": "amqps://cybercom.example.org:5671/cybercom",
    "BROKER_USERNAME": "cybercom-worker",
    "BROKER_PASSWORD": "p@ss/word",
    "BROKER_TLS_CA_FILE": "/run/cybercom/tls/ca.pem",
    "BROKER_TLS_CERT_FILE": "/run/cybercom/tls/client.pem",
    "BROKER_TLS_KEY_FILE": "/run/cybercom/tls/client.key",
    "MONGO_URI": "mongodb://cybercom.example.org:27017/",
    "MONGO_USERNAME": "cybercom-worker",
    "MONGO_PASSWORD": "db secret",
    "MONGO_AUTH_SOURCE": "admin",
    "MONGO_TLS_CA_FILE": "/run/cybercom/tls/ca.pem",
    "MONGO_TLS_CERT_KEY_FILE": "/run/cybercom/tls/client-combined.pem",
    "WORKER_NODE_NAME": "python-worker@lab-pc",
    "WORKER_QUEUES": "python",
    "RESULT_DATABASE": "cybercom",
    "LOG_LEVEL": "info",
}


def write_bundle(tmp_path: Path) -> Path:
    """A bundle directory as ops/worker-bundle --python writes it (bare and JSON-quoted values)."""
    lines = ["# Python worker for lab-pc: settings for the cybercom installation."]
    for key, value in SERVICE_ENV.items():
        quoted = any(c in value for c in " @/") and not value.startswith(("/", "amqps:", "mongodb:"))
        lines.append(f'{key}="{value}"' if quoted else f"{key}={value}")
    (tmp_path / "worker.env").write_text("\n".join(lines) + "\n")
    (tmp_path / "tasks").mkdir()
    return tmp_path


def test_reads_bare_and_quoted_values_and_skips_comments(tmp_path: Path) -> None:
    env_file = tmp_path / "worker.env"
    env_file.write_text('# comment\n\nA=plain\nB="with space and \\"quote\\""\nexport C=x=y\n')
    assert read_env_file(env_file) == {"A": "plain", "B": 'with space and "quote"', "C": "x=y"}
    env_file.write_text("NOT A LINE\n")
    with pytest.raises(SettingsError, match=r"worker\.env:1"):
        read_env_file(env_file)


def test_bundle_points_certificates_at_its_own_certs_and_the_environment_wins(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path)
    settings = load_settings({"WORKER_QUEUES": "lab,python"}, bundle)
    certs = (bundle / "certs").resolve()
    assert settings.broker.ca_file == str(certs / "ca.pem")
    assert settings.broker.cert_file == str(certs / "client.pem")
    assert settings.broker.key_file == str(certs / "client.key")
    assert settings.results.cert_key_file == str(certs / "client-combined.pem")
    assert settings.broker.password == "p@ss/word"
    assert settings.results.password == "db secret"
    assert settings.queues == ("lab", "python")
    assert settings.node_name == "python-worker@lab-pc"
    assert settings.tasks_dir == bundle / "tasks"


def test_defaults_one_message_per_process_the_python_queue_and_info_logs() -> None:
    settings = load_settings(
        {"BROKER_URL": "amqp://localhost:5672//", "MONGO_URI": "mongodb://localhost:27017/"}
    )
    assert settings.queues == ("python",)
    assert settings.prefetch_multiplier == 1
    assert settings.concurrency is None
    assert settings.track_started is False
    assert settings.log_level == "INFO"
    assert settings.node_name.startswith("python-worker@")
    assert settings.results.database == "cybercom"
    assert settings.results.collection == "tombstone"
    assert settings.tasks_dir is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "BROKER_URL is not set"),
        ({"BROKER_URL": "redis://x"}, "BROKER_URL must start with amqp"),
        ({"BROKER_URL": "amqps://x:5671/v"}, "MONGO_URI is not set"),
        ({"BROKER_URL": "amqps://x:5671/v", "MONGO_URI": "http://x"}, "MONGO_URI must start"),
        ({**SERVICE_ENV, "WORKER_CONCURRENCY": "zero"}, "WORKER_CONCURRENCY must be a whole number"),
        ({**SERVICE_ENV, "WORKER_TRACK_STARTED": "maybe"}, "WORKER_TRACK_STARTED must be true or false"),
        ({**SERVICE_ENV, "LOG_LEVEL": "loud"}, "LOG_LEVEL must be one of"),
        ({**SERVICE_ENV, "WORKER_QUEUES": " , "}, "WORKER_QUEUES names no queue"),
    ],
)
def test_refuses_missing_and_malformed_settings(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load_settings(env)


def test_refuses_a_folder_that_is_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"has no worker\.env"):
        load_settings({}, tmp_path)


def test_configures_celery_for_the_service() -> None:
    from celery import Celery

    settings = load_settings(SERVICE_ENV)
    app = Celery("configured-only")
    worker.configure(app, settings)
    conf = app.conf
    assert conf.broker_url == "amqps://cybercom-worker:p%40ss%2Fword@cybercom.example.org:5671/cybercom"
    assert conf.broker_use_ssl["certfile"] == "/run/cybercom/tls/client.pem"
    assert conf.broker_use_ssl["keyfile"] == "/run/cybercom/tls/client.key"
    assert conf.broker_use_ssl["ca_certs"] == "/run/cybercom/tls/ca.pem"
    assert conf.result_backend == "mongodb://cybercom.example.org:27017/"
    backend = conf.mongodb_backend_settings
    assert backend["taskmeta_collection"] == "tombstone"
    assert backend["options"]["tls"] is True
    assert backend["options"]["tlsCertificateKeyFile"] == "/run/cybercom/tls/client-combined.pem"
    assert (conf.task_default_queue, conf.task_default_exchange, conf.task_default_routing_key) == (
        "python",
    ) * 3
    assert conf.task_acks_late is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.worker_send_task_events is True
    assert conf.accept_content == ["json"]


def test_describes_what_it_connects_to_without_secrets() -> None:
    text = worker.describe(load_settings(SERVICE_ENV), ["labtasks.a", "labtasks.b"])
    assert "broker:         amqps://cybercom.example.org:5671/cybercom (TLS, client certificate" in text
    assert "queues:         python" in text
    assert "database cybercom, collection tombstone (TLS" in text
    assert "tasks (2):      labtasks.a, labtasks.b" in text
    assert "p@ss" not in text
    assert "db secret" not in text


def test_lists_the_modules_of_a_folder(tmp_path: Path) -> None:
    (tmp_path / "soil.py").write_text("")
    (tmp_path / "_private.py").write_text("")
    (tmp_path / "notes.md").write_text("")
    (tmp_path / "water").mkdir()
    (tmp_path / "water" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()
    assert worker.modules_in(tmp_path) == ["soil", "water"]


def test_the_worker_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    from cybercom.cli import build_parser

    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(["worker", "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert "usage: cybercom worker" in out
    assert "--bundle DIR" in out
    assert "BROKER_TLS_CERT_FILE" in out


def test_refuses_to_start_without_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cybercom.cli import EXIT_USAGE, main

    bundle = write_bundle(tmp_path)
    (bundle / "tasks" / "README.md").write_text("The lab's modules go here.\n")
    assert main(["worker", "--bundle", str(bundle), "--check"]) == EXIT_USAGE
    assert "no tasks in" in capsys.readouterr().err
