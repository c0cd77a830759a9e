"""Naming rules are code: case conversion, suggestions and safe names live here.

Every stage that turns a catalog name into something else (a Python
identifier, a file name, a suggestion in a diagnostic) goes through this
module, so that one catalog always maps to one set of names.
"""

from __future__ import annotations

import difflib
import keyword
import re
import unicodedata
import sys
from collections.abc import Iterable
from contextlib import suppress
from functools import cache, lru_cache
from pathlib import Path

CAMEL_CASE = re.compile(r"^[a-z][a-zA-Z0-9]*$")
PASCAL_CASE = re.compile(r"^[A-Z][a-zA-Z0-9]*$")
_WORD = re.compile(r"[A-Z]+[0-9]*(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


def words(name: str) -> list[str]:
    """Split any spelling into words: ``meter_id``, ``MeterID``, ``meter-id``."""
    return _WORD.findall(name)


def ascii_letters(name: str) -> str:
    """Accents dropped (``reëleDatum`` -> ``reeleDatum``): NFKD, without combining marks."""
    if name.isascii():
        return name
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(character for character in decomposed if not unicodedata.combining(character))


def to_camel(name: str) -> str:
    """The lowerCamelCase form of a payload property name (accents transliterated)."""
    parts = [part.lower() for part in words(ascii_letters(name))]
    if not parts:
        return name
    camel = parts[0] + "".join(part.capitalize() for part in parts[1:])
    if not camel[0].isalpha():
        camel = "n" + camel.capitalize()
    return camel


# Names repeat (every event's ``id``, ``source``, a payload's ``meterId``): the
# conversions of the class names are memoised, bounded, as catalog text is
# untrusted. They return str, which no caller can change.
_NAME_CACHE = 16384


@lru_cache(maxsize=_NAME_CACHE)
def to_pascal(name: str) -> str:
    parts = [part.lower() for part in words(name)]
    pascal = "".join(part.capitalize() for part in parts)
    if not pascal or not pascal[0].isalpha():
        pascal = "N" + pascal
    return pascal


def to_snake(name: str) -> str:
    snake = "_".join(part.lower() for part in words(name))
    if not snake or snake[0].isdigit():
        snake = "n_" + snake
    if keyword.iskeyword(snake) or keyword.issoftkeyword(snake):
        snake += "_"
    return snake


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The known name a typo most likely meant, if any is close enough."""
    options = list(candidates)
    matches = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    if matches:
        return matches[0]
    lowered = {option.lower(): option for option in options}
    return lowered.get(name.lower())


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    match = closest(name, candidates)
    return f"; did you mean '{match}'?" if match else ""


# Het Normo ID04: the executed command is in the past tense. Regular verbs end
# in -ed; these are the irregular past forms (and participles) we accept.
IRREGULAR_PAST = {
    "began": "begin", "begun": "begin", "bound": "bind", "bought": "buy", "broadcast": "broadcast",
    "built": "build", "chosen": "choose", "cut": "cut", "dealt": "deal", "done": "do", "drawn": "draw",
    "drew": "draw", "found": "find", "frozen": "freeze", "given": "give", "got": "get", "gotten": "get",
    "held": "hold", "hidden": "hide", "hung": "hang", "kept": "keep", "known": "know", "laid": "lay",
    "led": "lead", "left": "leave", "lent": "lend", "lost": "lose", "made": "make", "met": "meet",
    "paid": "pay", "put": "put", "quit": "quit", "ran": "run", "read": "read", "reset": "reset",
    "rewritten": "rewrite", "run": "run", "said": "say", "seen": "see", "sent": "send", "set": "set",
    "shown": "show", "shut": "shut", "sold": "sell", "spent": "spend", "split": "split", "taken": "take",
    "told": "tell", "undone": "undo", "upheld": "uphold", "withdrawn": "withdraw", "won": "win",
    "written": "write", "overridden": "override", "forgotten": "forget", "begot": "beget",
    "gone": "go", "went": "go", "broken": "break", "fallen": "fall", "risen": "rise", "thrown": "throw",
    "driven": "drive", "grown": "grow", "sought": "seek", "taught": "teach", "caught": "catch",
    "brought": "bring", "thought": "think", "felt": "feel", "lit": "light",
    # Participles in -en, which must not read as Dutch infinitives.
    "forbidden": "forbid", "forgiven": "forgive", "mistaken": "mistake", "proven": "prove", "shaken": "shake",
    "spoken": "speak", "stolen": "steal", "woken": "wake", "awoken": "awake", "eaten": "eat", "beaten": "beat",
    "bitten": "bite", "ridden": "ride", "overtaken": "overtake", "undertaken": "undertake", "arisen": "arise",
    "retaken": "retake", "rewoven": "reweave", "striven": "strive", "sworn": "swear", "torn": "tear",
    "worn": "wear", "born": "bear",
}
_PRESENT_TO_PAST = {present: past for past, present in IRREGULAR_PAST.items()}
_DOUBLE_FINAL = {"submit", "stop", "plan", "commit", "admit", "cancel", "transfer", "ship", "drop", "tag",
                 "log", "map", "permit", "omit", "emit", "refer", "prefer", "occur", "label", "signal"}


# Dutch: catalogs of Dutch public bodies name commands in Dutch (`ingediend`,
# `gewijzigd`, `verleend`). A past participle is ge- + stem + -d/-t, without
# ge- after an unstressed prefix (be-, ver-, ...), with a separable particle
# before ge- (in-ge-diend); strong verbs end in -en and are listed.
_NL_PARTICLES = ("aan", "af", "bij", "door", "in", "mee", "na", "om", "op", "over", "terug", "toe", "uit",
                 "vast", "voor", "weg", "samen", "tegen", "vrij", "rond", "her")
_NL_UNSTRESSED = ("be", "ge", "her", "ont", "ver", "er")
NL_STRONG_PARTICIPLES = {
    "sluiten": "gesloten", "schrijven": "geschreven", "geven": "gegeven", "nemen": "genomen",
    "komen": "gekomen", "zenden": "gezonden", "verzenden": "verzonden", "ontvangen": "ontvangen",
    "trekken": "getrokken", "heffen": "geheven", "bieden": "geboden", "krijgen": "gekregen",
    "verkrijgen": "verkregen", "breken": "gebroken", "doen": "gedaan", "gaan": "gegaan", "staan": "gestaan",
    "vinden": "gevonden", "beginnen": "begonnen", "lopen": "gelopen", "vallen": "gevallen",
    "kiezen": "gekozen", "verliezen": "verloren", "vragen": "gevraagd", "wegen": "gewogen",
    "verlopen": "verlopen", "vervallen": "vervallen", "bevinden": "bevonden", "verbinden": "verbonden",
    "verschijnen": "verschenen", "beschrijven": "beschreven", "ontbinden": "ontbonden", "zien": "gezien",
    "houden": "gehouden", "laten": "gelaten", "slaan": "geslagen", "dragen": "gedragen", "sterven": "gestorven",
    "worden": "geworden", "zijn": "geweest", "hebben": "gehad", "verbieden": "verboden", "bewijzen": "bewezen",
    "wijzen": "gewezen", "schieten": "geschoten", "verwerven": "verworven", "vergeten": "vergeten",
}
_NL_STRONG = frozenset(NL_STRONG_PARTICIPLES.values())
# English verbs that end in -en like a Dutch infinitive.
_EN_VERBS_IN_EN = frozenset(
    "open reopen happen listen fasten harden shorten lengthen widen threaten strengthen weaken tighten loosen "
    "flatten broaden deepen awaken soften brighten darken frighten lighten sharpen sweeten thicken whiten "
    "worsen ripen hasten glisten moisten christen often token".split()
)


def _nl_split(word: str) -> tuple[str, str]:
    """(separable particle, rest): ``indienen`` -> ("in", "dienen")."""
    for particle in sorted(_NL_PARTICLES, key=len, reverse=True):
        if word.startswith(particle) and len(word) - len(particle) >= 4:
            return particle, word[len(particle):]
    return "", word


def is_dutch_participle(word: str) -> bool:
    """``ingediend``, ``gewijzigd``, ``verleend``, ``vastgesteld``, ``afgesloten``."""
    if word in _NL_STRONG or any(word.endswith(strong) and word[: -len(strong)] in _NL_PARTICLES for strong in _NL_STRONG):
        return True
    particle, rest = _nl_split(word)
    if rest.startswith("ge") and len(rest) >= 5 and rest.endswith(("d", "t")):
        return True
    if not particle and rest.startswith(_NL_UNSTRESSED) and len(rest) >= 6 and rest.endswith(("d", "t")):
        return True
    return False


def is_dutch_verb(word: str) -> bool:
    """A Dutch infinitive (``indienen``, ``wijzigen``), not an English verb in -en."""
    return word.endswith("en") and len(word) >= 5 and word not in _EN_VERBS_IN_EN


def dutch_participle(verb: str) -> str:
    """The past participle of a Dutch infinitive (``indienen`` -> ``ingediend``)."""
    if verb in NL_STRONG_PARTICIPLES:
        return NL_STRONG_PARTICIPLES[verb]
    particle, rest = _nl_split(verb)
    if rest in NL_STRONG_PARTICIPLES:
        return particle + NL_STRONG_PARTICIPLES[rest]
    stem = rest[:-2]
    if len(stem) >= 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiou":
        stem = stem[:-1]  # stoppen -> stop
    elif len(stem) >= 3 and stem[-1] not in "aeiou" and stem[-2] in "aeou" and stem[-3] not in "aeiou":
        stem = stem[:-1] + stem[-2] + stem[-1]  # verlenen -> verleen, registreren -> registreer
    ending = "" if stem.endswith(("d", "t")) else ("t" if stem[-1] in "tkfschp" else "d")  # 't kofschip
    stem = stem[:-1] + {"v": "f", "z": "s"}.get(stem[-1], stem[-1])  # leven -> leef
    prefix = "" if rest.startswith(_NL_UNSTRESSED) else "ge"
    return particle + prefix + stem + ending


def is_past_tense(word: str) -> bool:
    return word.endswith("ed") or word in IRREGULAR_PAST or is_dutch_participle(word)


def past_tense(verb: str) -> str:
    """A best guess at the past tense, for suggestions (``update`` -> ``updated``;
    a Dutch verb gets its Dutch participle: ``indienen`` -> ``ingediend``)."""
    if is_dutch_verb(verb):
        return dutch_participle(verb)
    if verb in _PRESENT_TO_PAST:
        return _PRESENT_TO_PAST[verb]
    if verb.endswith("ing") and len(verb) > 5:  # "updating" -> "updated"
        stem = verb[:-3]
        return past_tense(stem) if stem in _PRESENT_TO_PAST or stem in _DOUBLE_FINAL else stem + "ed"
    if verb in _DOUBLE_FINAL:
        return verb + verb[-1] + "ed"
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and len(verb) > 1 and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


@lru_cache(maxsize=_NAME_CACHE)
def safe_file_name(name: str) -> str:
    """The one way a catalog name becomes part of a file name.

    Only ``[A-Za-z0-9._-]`` survive, no name is ``.``/``..`` or starts with a
    dot, so a type like ``../../x`` or ``..\\x`` can never leave the output
    directory.
    """
    safe = _UNSAFE_FILE_CHARS.sub("_", name).strip("._") or "_"
    return safe[:200]


# Attributes pydantic's BaseModel already has: a field with one of these
# names would shadow it (pydantic warns or fails), so it gets a trailing "_"
# and keeps its catalog name as alias.
PYDANTIC_RESERVED = frozenset(
    {
        "copy", "dict", "json", "schema", "schema_json", "validate", "construct", "fields", "parse_obj",
        "parse_raw", "parse_file", "from_orm", "update_forward_refs", "model_config", "model_fields",
        "model_computed_fields", "model_extra", "model_fields_set", "model_construct", "model_copy",
        "model_dump", "model_dump_json", "model_json_schema", "model_parametrized_name",
        "model_post_init", "model_rebuild", "model_validate", "model_validate_json",
        "model_validate_strings", "to_json", "to_dict", "event_type", "event_dataversion", "has_data",
        "attribute_types",
    }
)


def python_field_name(name: str) -> str:
    """A catalog attribute or property name as a Python field name."""
    field_name = to_snake(name)
    if field_name in PYDANTIC_RESERVED or field_name.startswith("model_"):
        field_name += "_"
    return field_name


def python_package_name(catalog_id: str) -> str:
    """``meter-data`` -> ``meter_data`` (contract §4). A name that is not an
    identifier, a keyword or a module of the standard library (``email``,
    ``json``, ``typing``: an installed package of that name would shadow it)
    gets ``catalog_`` in front. Two catalogs may still meet on one name
    (``import`` and ``catalog-import``): rule CAT-PACKAGE-NAME reports it."""
    package = re.sub(r"[^a-z0-9_]", "_", catalog_id.lower())
    if not package or package[0].isdigit() or keyword.iskeyword(package) or package in sys.stdlib_module_names \
            or package.startswith("_"):
        package = "catalog_" + package
    return package


_RUNTIME = Path(__file__).resolve().parent / "runtime"


def _python_templates() -> Path:
    """The built-in Python templates, wherever they are (a checkout's
    templates/, or generator/templates/ in a wheel): render.templatefiles'
    ``builtin_dir``, the one function that finds them."""
    from .render.templatefiles import builtin_dir  # here: render imports this module

    return builtin_dir() / "python"


@cache
def generated_module_names() -> frozenset[str]:
    """Every name bound at the top of a generated package's modules besides
    its event classes: what the runtime modules define or import (read from
    their source, so a runtime change is followed), what the templates import,
    and the builtins. An event class must not take one of them."""
    import ast

    names = set(_fixed_names())
    for source in _runtime_sources():
        try:
            tree = ast.parse(source.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(target.id for target in targets if isinstance(target, ast.Name))
    return frozenset(names)


def _runtime_sources() -> list[Path]:
    return sorted(_RUNTIME.glob("*.py"))


@cache
def _fixed_names() -> frozenset[str]:
    """The names of ``generated_module_names`` that need no parsing: the
    builtins, the templates' imports and the runtime's module names."""
    import builtins

    names = set(dir(builtins)) | {"annotations", "models", "events", "EVENTS", "Field", "ClassVar", "Literal", "Any",
                                  "Iterable", "Mapping", "Annotated", "BaseModel", "ConfigDict", "RootModel"}
    names.update(source.stem for source in _runtime_sources())
    templates = _python_templates()
    for template in sorted(templates.glob("*.jinja")) if templates.is_dir() else ():
        with suppress(OSError):
            names.update(re.findall(r"^from [.\w]+ import ([A-Z]\w*)", template.read_text(encoding="utf-8"), re.MULTILINE))
    return frozenset(names)


_IDENTIFIER = re.compile(r"[^\W\d]\w*")


@cache
def _runtime_words() -> frozenset[str] | None:
    """Every identifier the runtime's source spells (NFKC, as Python reads
    identifiers): a name bound at the top of a runtime module is one of them,
    found without parsing the runtime; None when a file cannot be read (then
    only parsing tells)."""
    words: set[str] = set()
    try:
        for source in _runtime_sources():
            words.update(_IDENTIFIER.findall(source.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
    return frozenset(unicodedata.normalize("NFKC", word) if not word.isascii() else word for word in words)


def is_generated_module_name(name: str) -> bool:
    """``name in generated_module_names()``, parsing the runtime only for a
    name its source spells (a class name almost never is)."""
    if name in _fixed_names():
        return True
    words = _runtime_words() if name.isascii() else None  # (an exotic identifier: parse)
    return (words is None or name in words) and name in generated_module_names()


def python_class_name(*parts: str, suffix: str = "Event") -> str:
    """An event or data class name: PascalCase, never a keyword, and never a
    name the generated modules already use (``EventError``, ``Field``,
    ``CloudEvent``, a builtin): such a name gets ``suffix`` appended."""
    name = "".join(to_pascal(part) for part in parts if part)
    name = name if name.isidentifier() and not keyword.iskeyword(name) else "N" + name
    while is_generated_module_name(name):
        name += suffix
    return name


# --- Class names of a generated package ------------------------------------
#
# One scheme for envelopes and payloads (issue 20). An envelope is its type in
# PascalCase, less the catalog's common reverse-DNS prefix, plus its
# dataversion with underscores: ``nl.brp.persoon-verhuisd`` 1.2.0 in a
# catalog of ``nl.brp.*`` types -> ``PersoonVerhuisdV1_2_0`` (``V1_20_0`` and
# ``V12_0_0`` cannot meet). A type's own major-version segment that says what
# the dataversion says (``.v2`` with 2.0.0) is not repeated. Its payload is
# the envelope name + ``Data``; a nested object schema adds its path
# (``...DataRegistersItem``); a shared schema keeps its catalog name. The
# AsyncAPI and JSON Schema outputs title their schemas with these same names.

_VERSION_SEGMENT = re.compile(r"^v(\d+)$")


def _type_segments(event_type: str) -> list[str]:
    """The dotted segments of a type, less a trailing ``vN`` segment."""
    segments = event_type.split(".")
    if len(segments) > 1 and _VERSION_SEGMENT.match(segments[-1]):
        segments = segments[:-1]
    return segments


def common_type_prefix(types: Iterable[str]) -> int:
    """How many leading segments every type's namespace shares, when they are
    at least two (a reverse-DNS prefix such as ``nl.brp``); else 0. A one-word
    prefix (``mdm``) is kept: it is short and tells the domain. (The prefix is
    not stripped either when a name would be left with one word.)"""
    namespaces = [_type_segments(event_type)[:-1] for event_type in types]
    if not namespaces:
        return 0
    shared = 0
    for parts in zip(*namespaces):
        if len(set(parts)) != 1:
            break
        shared += 1
    return shared if shared >= 2 else 0


def _envelope_base(event_type: str, dataversion: str | None, strip: int, short: bool = True) -> str:
    segments = event_type.split(".")
    version = _VERSION_SEGMENT.match(segments[-1]) if len(segments) > 1 else None
    if short and version and dataversion and dataversion.split(".")[0] == version.group(1):
        segments = segments[:-1]  # nl.brp.x.v2 at 2.0.0: the V2_0_0 says it
    name = python_class_name(*segments[strip:])
    if dataversion:
        name += "V" + dataversion.replace(".", "_")
    return name


def envelope_class_names(keys: Iterable[tuple[str, str | None]]) -> dict[tuple[str, str | None], str]:
    """Envelope class name per (type, dataversion) of one catalog, unique in it.

    Names depend on the catalog's set of types only through its common prefix,
    so adding or reordering events in the same namespace renames nothing. When
    the short form of two keys meets, both keep their whole type in the name;
    a remaining clash (``a-b`` and ``a.b``) gets a counter, in key order."""
    keys = sorted(set(keys), key=lambda key: (key[0], key[1] or ""))
    strip = common_type_prefix(event_type for event_type, _ in keys)
    if strip and any(len(words(_envelope_base(event_type, None, strip))) < 2 for event_type, _ in keys):
        strip = 0  # io.cloudevents.test: "Test" alone says too little
    short = {key: _envelope_base(key[0], key[1], strip) for key in keys}
    counts: dict[str, int] = {}
    for name in short.values():
        counts[name] = counts.get(name, 0) + 1
    names: dict[tuple[str, str | None], str] = {}
    taken: set[str] = set()
    for key in keys:
        base = short[key]
        if counts[base] > 1:
            base = _envelope_base(key[0], key[1], 0, short=False)
        name, counter = base, 2
        while name in taken:
            name, counter = f"{base}_{counter}", counter + 1
        taken.add(name)
        names[key] = name
    return names


def payload_class_name(envelope_class: str) -> str:
    """The payload root model of an envelope: ``MdmMeterUpdatedV2_0_0Data``."""
    return envelope_class + "Data"


def schema_class_name(name: str) -> str:
    """A shared schema's class: its catalog name when that is a usable class
    name (``Meter``, ``EanCode``), else its PascalCase form; one the
    generated modules already use gets ``Model`` appended (``Literal`` ->
    ``LiteralModel``, as datamodel-code-generator spells such names)."""
    if name.isidentifier() and name[:1].isupper() and not keyword.iskeyword(name):
        candidate = name
        while is_generated_module_name(candidate):
            candidate += "Model"
        return candidate
    return python_class_name(name, suffix="Model")


def child_class_name(parent: str, keyword_: str, key: str | int | None = None) -> str:
    """The class of an object schema nested in ``parent`` under a JSON Schema
    keyword: ``properties/registers`` -> ``ParentRegisters``, ``items`` ->
    ``ParentItem``, ``prefixItems/0`` -> ``ParentItem1``, ``anyOf/1`` ->
    ``ParentOption2``, ``additionalProperties`` -> ``ParentAdditionalProperties``."""
    if isinstance(key, str):
        return parent + to_pascal(key)
    suffix = "Item" if keyword_ in ("items", "prefixItems") else "Option" if keyword_ in ("anyOf", "oneOf", "allOf") else to_pascal(keyword_)
    return f"{parent}{suffix}{'' if key is None else key + 1}"
