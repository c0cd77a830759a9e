"""The runtime of the generated packages: real modules, copied verbatim.

Every ``*.py`` file of this directory except this one is copied unchanged
into each generated package (``render/python.py``), so it is linted,
type-checked and unit-tested here, in place, like any module of evcat. A
runtime module imports only the standard library, pydantic, its siblings
(relative imports) and the optional libraries of its extra.

``EXTRAS`` lists the optional dependencies of runtime modules that need more
than pydantic; they become the extras of each generated package's
``pyproject.toml`` (``pip install out/python/<package>[webhook]``).
"""

from __future__ import annotations

from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent

# extra name -> requirements (PEP 508), sorted by name in the generated pyproject.toml.
EXTRAS: dict[str, tuple[str, ...]] = {
    "delivery": ("httpx>=0.27",),  # _delivery.py
    "webhook": ("uvicorn>=0.30",),  # _webhook.py is plain ASGI; this serves it
    "kafka": ("aiokafka>=0.10",),  # kafka.py
    "mqtt": ("paho-mqtt>=2.0",),  # mqtt.py
    "rabbitmq": ("aio-pika>=9.0",),  # rabbitmq.py
}

# What every generated package needs at run time.
# jiter: pydantic's own JSON parser, which refuses objects that repeat a name
# (catch_duplicate_keys, since 0.7; _reading.py).
REQUIRES: tuple[str, ...] = ("jiter>=0.7", "pydantic>=2.6")


def runtime_files() -> dict[str, str]:
    """File name -> source of every runtime module copied into a package."""
    files: dict[str, str] = {}
    for path in sorted(RUNTIME_DIR.glob("*.py")):
        if path.name != "__init__.py":
            files[path.name] = path.read_text(encoding="utf-8")
    return files
