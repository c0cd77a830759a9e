"""One naming scheme for envelopes and payloads (issue 20): decided in
``generator/naming.py``, exercised on the names and on generated packages."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from generator.naming import child_class_name, envelope_class_names, payload_class_name

from .goldens import CATALOGS


def test_versions_cannot_meet() -> None:
    names = envelope_class_names([("mdm.meter.updated", "1.20.0"), ("mdm.meter.updated", "12.0.0")])
    assert names == {("mdm.meter.updated", "1.20.0"): "MdmMeterUpdatedV1_20_0",
                     ("mdm.meter.updated", "12.0.0"): "MdmMeterUpdatedV12_0_0"}


def test_reverse_dns_prefix_is_stripped_and_a_one_word_prefix_kept() -> None:
    assert envelope_class_names([("nl.brp.persoon-verhuisd", "1.2.0"), ("nl.brp.persoon-overleden", None)]) == {
        ("nl.brp.persoon-verhuisd", "1.2.0"): "PersoonVerhuisdV1_2_0",
        ("nl.brp.persoon-overleden", None): "PersoonOverleden",
    }
    assert envelope_class_names([("mdm.meter.updated", "2.0.0")]) == {("mdm.meter.updated", "2.0.0"): "MdmMeterUpdatedV2_0_0"}
    # A name of one word says too little: the prefix stays.
    assert envelope_class_names([("io.cloudevents.test", None)]) == {("io.cloudevents.test", None): "IoCloudeventsTest"}
    # Types in different namespaces share no prefix.
    names = envelope_class_names([("nl.brp.persoon-verhuisd", "1.0.0"), ("nl.rvig.adres-gewijzigd", "1.0.0")])
    assert set(names.values()) == {"NlBrpPersoonVerhuisdV1_0_0", "NlRvigAdresGewijzigdV1_0_0"}


def test_a_version_segment_is_not_repeated_and_clashes_fall_back_to_full_names() -> None:
    names = envelope_class_names([("nl.brp.naamgebruik-gewijzigd", "1.0.0"), ("nl.brp.naamgebruik-gewijzigd.v2", "2.0.0")])
    assert set(names.values()) == {"NaamgebruikGewijzigdV1_0_0", "NaamgebruikGewijzigdV2_0_0"}
    # .v2 at 3.0.0 keeps its V2; a notification keeps it too.
    assert envelope_class_names([("nl.brp.adres-gewijzigd.v2", "3.0.0"), ("nl.brp.persoon-overleden.v2", None)]) == {
        ("nl.brp.adres-gewijzigd.v2", "3.0.0"): "AdresGewijzigdV2V3_0_0", ("nl.brp.persoon-overleden.v2", None): "PersoonOverledenV2"}
    # Two keys whose short names meet keep their whole type; a remaining clash gets a counter.
    clash = envelope_class_names([("nl.brp.adres-gewijzigd.v2", "2.0.0"), ("nl.brp.adres-gewijzigd", "2.0.0")])
    assert set(clash.values()) == {"NlBrpAdresGewijzigdV2_0_0", "NlBrpAdresGewijzigdV2V2_0_0"}
    assert len(set(envelope_class_names([("a.b-c", None), ("a.b.c", None), ("a-b.c", None)]).values())) == 3


def test_names_do_not_depend_on_order() -> None:
    keys = [("nl.brp.persoon-verhuisd", "1.2.0"), ("nl.brp.persoon-verhuisd", "1.1.0"), ("nl.brp.naamgebruik-gewijzigd.v2", "2.0.0")]
    assert envelope_class_names(keys) == envelope_class_names(list(reversed(keys)))


def test_child_names() -> None:
    assert child_class_name("XV1_0_0Data", "properties", "registers") == "XV1_0_0DataRegisters"
    assert child_class_name("XData", "items") == "XDataItem"
    assert child_class_name("XData", "prefixItems", 0) == "XDataItem1"
    assert child_class_name("XData", "anyOf", 1) == "XDataOption2"
    assert child_class_name("XData", "additionalProperties") == "XDataAdditionalProperties"


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from generator.commands.generate import render
    from generator.commands.lint import lint

    out = tmp_path_factory.mktemp("names")
    for name in ("nlgov", "normo", "hostile"):
        for relative, content in render(lint(str(CATALOGS[name])).catalog_set, ["python"])["python"].items():
            path = out / name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    return out


@pytest.mark.parametrize("catalog, package", [("nlgov", "brp_personen"), ("nlgov", "zaken"), ("normo", "meter_data"),
                                              ("hostile", "hostile_names")])
def test_every_payload_class_is_its_envelope_name_plus_data(packages: Path, catalog: str, package: str) -> None:
    sys.path.insert(0, str(packages / catalog / "python"))
    try:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
        module = importlib.import_module(package)
        with_data = 0
        for cls in module.EVENTS.values():
            data = cls.model_fields["data"].annotation if "data" in cls.model_fields else None
            payload = getattr(module.models, payload_class_name(cls.__name__), None)
            if cls.event_dataversion is not None and payload is not None:
                with_data += 1
                assert data is payload or payload in getattr(data, "__args__", ()), (cls.__name__, data)
            assert cls.__name__.isidentifier() and "__" not in cls.__name__
        assert with_data >= 1
    finally:
        sys.path.remove(str(packages / catalog / "python"))
