"""What a profile is: the one home of every profile-dependent decision.

A ``Profile`` is a frozen value chosen once per catalog file (``profile:``)
and carried by the model; nothing else tests profile names. Adding a profile
means one entry here, its rules module (``rules/<name>.py``, whose rules
name the profile's ``family``) and its tests.

Sources: CloudEvents 1.0.2; NL GOV profile for CloudEvents 1.1 (§3.3-3.4,
appendix A); Het Normo Event Data Specification 1.1 (ID03-ID11).
"""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import NORMO_TIME_SCHEMA_PATTERN


@dataclass(frozen=True)
class SizeLimit:
    """An event larger than ``bytes`` on the wire (compact UTF-8 JSON) breaks ``rule``."""

    bytes: int
    rule: str
    message: str


@dataclass(frozen=True)
class Profile:
    name: str
    title: str  # display name ("Het Normo Event Data Specification 1.1")
    families: frozenset[str]  # rule families that apply: its own and those it extends
    replaces: frozenset[str] = frozenset()  # rule ids of the families it extends that it replaces
    # Instance rules that change with the profile.
    specversion_rule: str = "CE-REQUIRED"  # a specversion other than 1.0
    subject_rule: str = "CE-REQUIRED"  # an empty subject
    time_required: bool = False  # `time` on every event
    time_rule: str = "CE-TIME"
    time_pattern: str | None = None  # the exact form of `time` (JSON Schema pattern, ECMA-262)
    time_form: str = "RFC 3339"  # how the docs and messages name it
    # Attributes every event with data carries (dataversion, datacontenttype), with the rule that says so.
    required_with_data: tuple[tuple[str, str, str], ...] = ()
    sizes: tuple[SizeLimit, ...] = ()  # largest first
    # Versioning policy for `evcat diff` and CAT-VERSION-BUMP: "dataversion" (a
    # breaking change bumps MAJOR dataversion) or "type" (it needs a new type).
    versioning: str = "dataversion"
    versioning_source: str = "semver"

    def __repr__(self) -> str:
        # Deterministic across processes (frozensets print in hash order, and
        # string hashes change per process): render cache keys contain it.
        # What a profile holds is code, covered by the cache's code digest.
        return f"Profile({self.name!r})"

    def applies(self, families: frozenset[str], rule_id: str) -> bool:
        """Does a rule of ``families`` with id ``rule_id`` apply under this profile?"""
        return bool(self.families & families) and rule_id not in self.replaces

    @property
    def max_event_size(self) -> int:
        """The largest event (bytes on the wire) this profile lets a receiver take (its largest limit)."""
        return self.sizes[0].bytes if self.sizes else 64 * 1024

    @property
    def checked_against(self) -> str:
        return f"Checked against the {self.title}."


_CE_SIZE = SizeLimit(
    64 * 1024, "CE-SIZE", "intermediaries need only forward {limit} bytes (CloudEvents 1.0.2 §Size Limits): point to data with dataref"
)

CLOUDEVENTS = Profile(
    name="cloudevents",
    title="CloudEvents 1.0.2",
    families=frozenset({"cloudevents"}),
    sizes=(_CE_SIZE,),
)

NLGOV = Profile(
    name="nlgov",
    title="NL GOV profile for CloudEvents 1.1",
    families=frozenset({"cloudevents", "nlgov"}),
    replaces=frozenset({"CE-TYPE-RDNS"}),  # NLGOV-TYPE-RDNS (MUST) tightens it
    specversion_rule="NLGOV-SPECVERSION",
    sizes=(_CE_SIZE,),
    versioning="type",  # §3.3.4: a backward-incompatible change SHOULD change the type
    versioning_source="semver",  # for non-breaking changes; a breaking one needs a new type
)

NORMO = Profile(
    name="normo",
    title="Het Normo Event Data Specification 1.1",
    families=frozenset({"cloudevents", "nlgov", "normo"}),
    # ID03/ID04 replace the NL GOV source and type form; dataversion carries the major version (ID07).
    replaces=frozenset({"CE-TYPE-RDNS", "NLGOV-TYPE-RDNS", "NLGOV-TYPE-BREAKING", "NLGOV-SOURCE-URN"}),
    specversion_rule="NLGOV-SPECVERSION",
    subject_rule="NORMO-SUBJECT",  # ID11
    time_required=True,  # ID06
    time_rule="NORMO-TIME",
    time_pattern=NORMO_TIME_SCHEMA_PATTERN,
    time_form="UTC as yyyy-mm-ddThh:mm:ss.ffffffZ (Het Normo ID06)",
    required_with_data=(
        ("dataversion", "NORMO-DATAVERSION", "Het Normo ID07: an event with data carries 'dataversion'"),
        ("datacontenttype", "NORMO-CONTENTTYPE", "Het Normo ID05: an event with data carries 'datacontenttype'"),
    ),
    sizes=(
        SizeLimit(256 * 1024, "NORMO-SIZE-MAX", "Het Normo ID09 allows at most {limit} bytes"),
        SizeLimit(64 * 1024, "NORMO-SIZE-ADVISED", "Het Normo ID09 advises at most {limit} bytes: point to data with dataref"),
    ),
    versioning="dataversion",
    versioning_source="Het Normo ID07, semver",
)


PROFILES: dict[str, Profile] = {profile.name: profile for profile in (CLOUDEVENTS, NLGOV, NORMO)}
NAMES: tuple[str, ...] = tuple(PROFILES)
DEFAULT = NLGOV


def get(name: object) -> Profile:
    """The profile called ``name``; the default (nlgov) for anything else."""
    return PROFILES.get(name, DEFAULT) if isinstance(name, str) else DEFAULT
