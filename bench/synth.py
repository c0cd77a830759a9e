"""Write a synthetic, lint-clean catalog of N event types (realistic payloads).

Deterministic for a given seed: nested objects, arrays, enums, shared schemas
(within and across files), several dataversions, notifications without data,
extensions and examples. Usage:

    python bench/synth.py OUT_DIR [--events 1000] [--per-file 20] [--profile normo|nlgov]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import yaml

WORDS = (
    "meter reading tariff contract connection allocation grid supplier balance invoice customer "
    "address profile capacity settlement forecast switch move product price register device"
).split()
VERBS = "created updated removed validated rejected confirmed cancelled assigned calculated registered".split()


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_presenter)


def camel(*parts: str) -> str:
    return parts[0] + "".join(part.capitalize() for part in parts[1:])


def pascal(*parts: str) -> str:
    return "".join(part.capitalize() for part in parts)


def leaf(rng: random.Random, name: str) -> tuple[dict, object]:
    kind = rng.choice(["string", "integer", "number", "boolean", "enum", "date", "pattern"])
    description = f"The {name} of the record, as registered by the source system."
    if kind == "string":
        return {"type": "string", "maxLength": 80, "description": description}, f"{name}-value"
    if kind == "integer":
        return {"type": "integer", "minimum": 0, "maximum": 100000, "description": description}, rng.randint(0, 100000)
    if kind == "number":
        return {"type": "number", "minimum": 0, "description": description}, round(rng.random() * 1000, 2)
    if kind == "boolean":
        return {"type": "boolean", "description": description}, rng.random() < 0.5
    if kind == "enum":
        values = rng.sample(WORDS, 4)
        return {"type": "string", "enum": values, "description": description}, values[0]
    if kind == "date":
        return {"type": "string", "format": "date-time", "description": description}, "2024-01-01T00:00:00Z"
    return {"type": "string", "pattern": "^[0-9]{18}$", "description": description}, "871685900000000018"


def obj(rng: random.Random, depth: int, shared: dict[str, tuple[str, object]]) -> tuple[dict, dict]:
    properties, example, required = {}, {}, []
    names = rng.sample(WORDS, rng.randint(3, 5))
    for index, word in enumerate(names):
        name = camel(word, rng.choice(["id", "code", "value", "amount", "status", "kind"]))
        roll = rng.random()
        if depth < 2 and roll < 0.15:
            schema, value = obj(rng, depth + 1, shared)
            schema["description"] = f"Nested {word} details."
        elif depth < 2 and roll < 0.25:
            item, item_value = obj(rng, depth + 1, shared)
            schema = {"type": "array", "description": f"List of {word} entries.", "minItems": 1, "items": item}
            value = [item_value]
        elif roll < 0.5 and shared:
            ref_name = rng.choice(sorted(shared))
            ref, value = shared[ref_name]
            schema = {"$ref": ref, "description": f"The {word} ({ref_name})."}
        else:
            schema, value = leaf(rng, word)
        properties[name] = schema
        example[name] = value
        if index < 2:
            required.append(name)
    return {"type": "object", "description": "A record.", "required": required, "properties": properties}, example


def write(out: Path, events: int, per_file: int, profile: str, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    common_schemas = {
        "EanCode": {"type": "string", "pattern": "^[0-9]{18}$", "description": "EAN-18 code."},
        "Money": {
            "type": "object", "description": "An amount of money.", "required": ["amount", "currency"],
            "properties": {
                "amount": {"type": "number", "description": "Amount."},
                "currency": {"type": "string", "enum": ["EUR"], "description": "ISO 4217 currency."},
            },
        },
    }
    common_examples = {"EanCode": "871685900000000018", "Money": {"amount": 12.5, "currency": "EUR"}}
    file_count = (events + per_file - 1) // per_file
    made = 0
    for file_index in range(file_count):
        context = f"ctx{file_index:03d}"
        local_name = f"Party{file_index}"
        local_schema = {
            "type": "object", "description": "A market party.", "required": ["partyId"],
            "properties": {
                "partyId": {"type": "string", "pattern": "^[0-9]{13}$", "description": "EAN-13 of the party."},
                "role": {"type": "string", "enum": ["supplier", "grid", "metering"], "description": "Market role."},
            },
        }
        shared: dict[str, tuple[str, object]] = {
            local_name: (f"#/schemas/{local_name}", {"partyId": "8716871000002", "role": "grid"}),
        }
        if file_index > 0:
            for name, example in common_examples.items():
                shared[name] = (f"file000.yaml#/schemas/{name}", example)
        schemas = {local_name: local_schema}
        if file_index == 0:
            schemas.update(common_schemas)
            for name, example in common_examples.items():
                shared[name] = (f"#/schemas/{name}", example)
        event_list = []
        for position in range(min(per_file, events - made)):
            subject_word = WORDS[position % len(WORDS)] + str(position // len(WORDS))
            verb = VERBS[(position + file_index) % len(VERBS)]
            if profile == "normo":
                event_type = f"{context}.{subject_word}.{verb}"
            else:
                event_type = f"nl.{context}.{subject_word}-{verb}"
            entry: dict[str, object] = {
                "type": event_type,
                "title": f"{pascal(subject_word)} {verb}",
                "description": f"A {subject_word} was {verb} in {context}.",
                "subject": "EAN-18 code of the connection.",
            }
            if position % 10 == 9:  # a notification without data
                entry["examples"] = [{"subject": "871685900000000018"}]
            else:
                data, example = obj(rng, 0, shared)
                entry["dataversion"] = f"{1 + position % 3}.{position % 4}.0" if profile == "normo" else "1.0.0"
                entry["data"] = data
                entry["examples"] = [{"subject": "871685900000000018", "data": example}]
                if position % 7 == 3:
                    entry["extensions"] = {"gridoperator": {"type": "String", "description": "EAN-13 of the grid operator."}}
            event_list.append(entry)
            made += 1
        document = {
            "catalog": f"synthetic-{context}",
            "title": f"Synthetic events of {context}",
            "version": "1.0.0",
            "profile": profile,
            "producer": {
                "source": "urn:ean13:8716859000003:syn" if profile == "normo" else "urn:nld:oin:00000001823288444000:systeem:syn",
                "organization": "Synthetic",
            },
            "defaults": {"datacontenttype": "application/json", "time": "Moment of logging, UTC.", "id": "Random UUID v4."},
            "schemas": schemas,
            "events": event_list,
        }
        path = out / f"file{file_index:03d}.yaml"
        path.write_text(yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True), encoding="utf-8")
        files.append(path)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--per-file", type=int, default=20)
    parser.add_argument("--profile", choices=("normo", "nlgov"), default="normo")
    arguments = parser.parse_args()
    files = write(arguments.out, arguments.events, arguments.per_file, arguments.profile)
    size = sum(f.stat().st_size for f in files)
    print(f"wrote {arguments.events} event types in {len(files)} files, {size / 1e6:.1f} MB, to {arguments.out}")


if __name__ == "__main__":
    main()
