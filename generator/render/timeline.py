"""The picture on a catalog page: the producer, its event types and their
dataversions on a version timeline, laid out at generation time.

Only geometry lives here (numbers and labels); ``templates/docs/timeline.html.jinja``
prints it as an inline SVG, so the page needs no script and no network. The
x axis has one column per dataversion that occurs in the catalog (semver
order, notifications without data first); each type is a lane; each
dataversion a dot linking to its section of the type's page: filled when
live, hollow when deprecated.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..string_formats import semver_key

MAX_LANES = 150  # larger catalogs get the first lanes and a note: pages stay small
MAX_COLUMNS = 24  # more distinct dataversions than this: dots are placed by their order within the type
MAX_LABEL = 48  # characters of a type name shown in a lane (the whole name is the link's title)
CHAR = 7.3  # width of one character of 12 px monospace
LANE = 26
TOP = 46
COLUMN = 64
BOLD = 7.8  # width of one character of 12 px bold monospace


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    href: str
    version: str
    deprecated: bool


@dataclass(frozen=True)
class Lane:
    y: float
    label: str  # shortened when long
    type: str
    href: str
    deprecated: bool  # every dataversion of the type is deprecated
    x1: float
    x2: float
    dots: tuple[Dot, ...]


@dataclass(frozen=True)
class Column:
    x: float
    label: str


@dataclass(frozen=True)
class Timeline:
    width: float
    height: float
    producer: str
    producer_detail: str
    producer_y: float
    producer_width: float
    trunk_x: float  # the vertical line from the producer to its event types
    label_x: float
    trunk_top: float
    trunk_bottom: float
    lanes: tuple[Lane, ...]
    columns: tuple[Column, ...]
    legend_y: float
    hidden: int  # lanes not drawn (see MAX_LANES)


@dataclass(frozen=True)
class TypeVersions:
    """What the timeline needs of one event type."""

    type: str
    href: str  # the type's page, relative to the page that shows the picture
    versions: tuple[tuple[str | None, bool], ...]  # (dataversion or None for a notification, deprecated)


def _label(text: str, limit: int = MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _column_label(version: str | None) -> str:
    return version if version is not None else "no data"


def layout(producer: str, producer_detail: str, types: list[TypeVersions]) -> Timeline:
    shown = types[:MAX_LANES]
    distinct = sorted({version for item in shown for version, _ in item.versions}, key=lambda v: (v is not None, semver_key(v or "")))
    by_order = len(distinct) > MAX_COLUMNS
    column_count = max((len(item.versions) for item in shown), default=1) if by_order else len(distinct)
    producer, detail = _label(producer, 36), _label(producer_detail, 30)
    producer_width = round(max(len(producer) * BOLD, len(detail) * CHAR, 120) + 24)
    trunk_x = producer_width + 24
    label_x = trunk_x + 20
    label_width = max((len(_label(item.type)) for item in shown), default=10) * CHAR
    first_x = round(label_x + label_width + 28)
    columns = tuple(
        Column(first_x + index * COLUMN, f"#{index + 1}" if by_order else _column_label(distinct[index]))
        for index in range(column_count)
    )
    position = {version: index for index, version in enumerate(distinct)}
    lanes = []
    for lane_index, item in enumerate(shown):
        y = TOP + lane_index * LANE + LANE / 2
        ordered = sorted(item.versions, key=lambda v: (v[0] is not None, semver_key(v[0] or "")))
        dots = tuple(
            Dot(
                columns[index if by_order else position[version]].x, y,
                f"{item.href}#{'v' + version if version else 'notification'}",
                _column_label(version), deprecated,
            )
            for index, (version, deprecated) in enumerate(ordered)
        )
        lanes.append(Lane(y, _label(item.type), item.type, item.href, all(d for _, d in ordered), dots[0].x, dots[-1].x, dots))
    bottom = TOP + max(len(lanes), 1) * LANE
    return Timeline(
        width=round(first_x + max(column_count - 1, 0) * COLUMN + 60),
        height=bottom + 44,
        producer=producer,
        producer_detail=detail,
        producer_y=(TOP + bottom) / 2,
        producer_width=producer_width,
        trunk_x=trunk_x,
        label_x=label_x,
        trunk_top=lanes[0].y if lanes else TOP,
        trunk_bottom=lanes[-1].y if lanes else TOP,
        lanes=tuple(lanes),
        columns=columns,
        legend_y=bottom + 26,
        hidden=len(types) - len(shown),
    )
