"""The generated package as its users take it: installed with pip into a fresh
virtual environment, and its envelope classes as FastAPI request bodies
(contract §4.1: a body without a required attribute is a 422, not an
invented value)."""


import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from generator.commands.generate import render
from generator.commands.lint import lint

from .conftest import ROOT


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("package-use")
    for relative, content in render(lint(str(ROOT / "catalog")).catalog_set, ["python"])["python"].items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root / "python"


def test_pip_install_in_a_fresh_venv_needs_only_pydantic_and_jiter(generated: Path, tmp_path: Path) -> None:
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(generated / "meter_data")],
                             capture_output=True, text=True, timeout=600)
    if install.returncode != 0 and "No matching distribution" in install.stderr:
        pytest.skip(f"the package registry cannot be reached: {install.stderr[-300:]}")
    assert install.returncode == 0, install.stderr
    probe = (
        "import importlib.metadata as m, meter_data\n"
        "from meter_data.events import MdmMeterRemoved\n"
        "event = MdmMeterRemoved(subject='871685900000000018')\n"
        "assert meter_data.parse_event(event.to_json()).to_dict() == event.to_dict()\n"
        "names = sorted(d.metadata['Name'].lower() for d in m.distributions())\n"
        "print(names)\n"
    )
    run = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    # PEP 503 names: the distribution is meter_data (its package name), which pip lists as written
    installed = {re.sub(r"[-_.]+", "-", name) for name in eval(run.stdout)}  # noqa: S307 (our own probe's list)
    assert {"meter-data", "pydantic", "jiter"} <= installed
    assert not installed & {"httpx", "uvicorn", "aio-pika", "paho-mqtt", "aiokafka"}  # extras only on request


def test_envelope_classes_as_fastapi_request_bodies(generated: Path) -> None:
    fastapi = pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    sys.path.insert(0, str(generated))
    try:
        from meter_data.events import MdmMeterRemoved, MdmMeterUpdatedV2_0_0

        app = fastapi.FastAPI()
        received: list[dict[str, object]] = []  # endpoints annotate with classes imported here: no postponed annotations in this module

        @app.post("/removed", status_code=204)
        def removed(event: MdmMeterRemoved) -> None:
            received.append(event.to_dict())

        @app.post("/updated", status_code=204)
        def updated(event: MdmMeterUpdatedV2_0_0) -> None:
            received.append(event.to_dict())

        client = TestClient(app)
        body = {"specversion": "1.0", "type": "mdm.meter.removed", "id": "1", "source": "urn:ean13:8716859000003:cmr",
                "time": "2024-01-01T00:00:00.000000Z"}
        response = client.post("/removed", json=body)
        assert response.status_code == 204, response.text
        assert received == [body]  # nothing invented: no datacontenttype, no other time
        for missing in ("id", "source", "time"):  # required on the wire (Het Normo: time too)
            response = client.post("/removed", json={k: v for k, v in body.items() if k != missing})
            assert response.status_code == 422, (missing, response.text)
        response = client.post("/updated", json={**body, "type": "mdm.meter.updated", "dataversion": "2.0.0"})
        assert response.status_code == 422  # no data, no datacontenttype
        schema = client.get("/openapi.json").json()["components"]["schemas"]["MdmMeterRemoved"]
        assert {"id", "source", "time", "type", "specversion"} <= set(schema["required"]), schema
    finally:
        sys.path.remove(str(generated))
