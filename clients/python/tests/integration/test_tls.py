"""The service over HTTPS with a certificate from a private CA (as the installer makes it):
verification is on by default, ``ca_bundle=`` trusts the installation's CA."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from cybercom import Client

from .conftest import TOKEN

HTTPS_URL = os.environ["CYBERCOM_TEST_HTTPS_URL"]
CA_FILE = os.environ["CYBERCOM_TEST_CA_FILE"]


def test_an_unknown_ca_is_refused_by_default() -> None:
    with (
        Client(HTTPS_URL, token=TOKEN) as client,
        pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        client.data_store.databases()


def test_ca_bundle_trusts_the_installation_and_verify_false_skips_the_check() -> None:
    with Client(HTTPS_URL, token=TOKEN, ca_bundle=CA_FILE) as client:
        assert isinstance(client.data_store.databases(), list)
        assert client.health()["status"] in ("ok", "degraded")
    with Client(HTTPS_URL, token=TOKEN, verify=False) as client:
        assert isinstance(client.data_store.databases(), list)


def test_the_command_line_takes_ca_bundle_too() -> None:
    env = {**os.environ, "CYBERCOM_URL": HTTPS_URL, "CYBERCOM_TOKEN": TOKEN}
    refused = subprocess.run(
        [sys.executable, "-m", "cybercom", "ls"], env=env, capture_output=True, text=True
    )
    assert refused.returncode == 8, refused.stderr
    trusted = subprocess.run(
        [sys.executable, "-m", "cybercom", "ls", "--ca-bundle", CA_FILE],
        env=env,
        capture_output=True,
        text=True,
    )
    assert trusted.returncode == 0, trusted.stderr
