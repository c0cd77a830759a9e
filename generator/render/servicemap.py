"""The service diagram on a catalog page (catalog-format.md §9, "Services"):
the services, the channels between them and the event types on each arrow,
laid out at generation time (no layout program, no script on the page).

Three columns: the services that send | the channels | the services that
receive (a service that does both is in both outer columns). Every arrow
has its own row beside its service, and its label (the event types it
carries, shortened, the full list in the arrow's ``<title>``) is written on
that row, so no two labels and no label and box can overlap, however many
services there are: the picture grows downwards, and the page scrolls it
sideways on a narrow screen instead of shrinking its text. Rows are ordered
by the barycentre heuristic (Sugiyama, Tagawa and Toda 1981) to reduce
crossings; ties keep the catalog's order, so the layout is deterministic.

Only geometry lives here; ``templates/docs/service-map.html.jinja`` prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..model import Catalog, Link, Service

NAME = 7.3  # width of one character of the 12 px monospace names (bold: BOLD)
BOLD = 7.8
SMALL = 6.7  # of the 11 px monospace details and labels
ROW = 22  # the height of one arrow's row
PAD = 10  # inside a box, left and right
NODE = 42  # the least height of a box: its name and one detail line
GAP = 14  # between two boxes of a column
CROSS = 56  # the room between columns where arrows cross
MARGIN = 8
MAX_NAME = 26  # characters of a name shown in a box (the whole one in its <title>)
MAX_DETAIL = 32  # characters of a box's detail line (a channel's protocol and address)
MAX_LABEL = 34  # characters of an arrow's label
SWEEPS = 6  # barycentre passes

NO_CHANNEL = ""  # the channel of a link that names none


@dataclass(frozen=True)
class Node:
    kind: str  # service | channel
    name: str
    label: str  # the first line (a service's title, a channel's name), shortened
    detail: str  # the second line (a service's name, a channel's protocol and address), shortened
    full: str  # the <title>: everything, unshortened
    href: str | None
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Arrow:
    path: str  # SVG path data
    label: str  # the event types, shortened
    full: str  # the <title>: from, to and every event type
    label_x: float
    label_y: float
    anchor: str  # text-anchor of the label


@dataclass(frozen=True)
class ServiceMap:
    width: float
    height: float
    nodes: tuple[Node, ...]
    arrows: tuple[Arrow, ...]
    services: int
    channels: int


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_types(types: Iterable[str]) -> Callable[[str], str]:
    """A type without the dotted prefix every type of the catalog shares
    (``org.example.storage.blob-created`` -> ``blob-created``)."""
    split = [name.split(".") for name in types]
    common = 0
    if len(split) > 1:
        for parts in zip(*split):
            if len(set(parts)) != 1:
                break
            common += 1
    common = min(common, min((len(parts) for parts in split), default=1) - 1)

    def short(name: str) -> str:
        parts = name.split(".")
        return ".".join(parts[common:]) if parts[:common] == split[0][:common] else name

    return short


def label_of(types: list[str], short: Callable[[str], str], limit: int = MAX_LABEL) -> str:
    """The types, comma-separated, as many as fit in ``limit`` characters, then ``+N more``."""
    names = [short(name) for name in types]
    text = ", ".join(names)
    if len(text) <= limit:
        return text
    for shown in range(len(names) - 1, 0, -1):
        candidate = f"{', '.join(names[:shown])} +{len(names) - shown} more"
        if len(candidate) <= limit:
            return candidate
    return shorten(names[0], limit - len(f" +{len(names) - 1} more")) + f" +{len(names) - 1} more"


@dataclass
class _Edge:
    service: str
    channel: str
    types: list[str]  # the full types, in the order the catalog names them


def _edges(services: tuple[Service, ...], links: Callable[[Service], tuple[Link, ...]]) -> list[_Edge]:
    edges: dict[tuple[str, str], _Edge] = {}
    for service in services:
        for link in links(service):
            key = (service.name, link.channel or NO_CHANNEL)
            edge = edges.setdefault(key, _Edge(service.name, link.channel or NO_CHANNEL, []))
            if link.type not in edge.types:
                edge.types.append(link.type)
    return list(edges.values())


def _barycentre(items: list[str], neighbours: dict[str, list[str]], positions: dict[str, int]) -> list[str]:
    """``items`` by the mean position of their neighbours (none: where they are)."""
    def key(pair: tuple[int, str]) -> tuple[float, int]:
        index, item = pair
        found = [positions[other] for other in neighbours.get(item, []) if other in positions]
        return (sum(found) / len(found) if found else float(index), index)

    return [item for _, item in sorted(enumerate(items), key=key)]


def layout(catalog: Catalog, service_href: Callable[[str], str], channel_href: Callable[[str], str]) -> ServiceMap:
    services = {service.name: service for service in catalog.services}
    channels = {channel.name: channel for channel in catalog.channels}
    sends = _edges(catalog.services, lambda service: service.sends)
    receives = _edges(catalog.services, lambda service: service.receives)
    channel_order = list(channels)
    if any(edge.channel == NO_CHANNEL for edge in sends + receives):
        channel_order.append(NO_CHANNEL)
    for edge in sends + receives:  # a channel the catalog does not define (a lint error): drawn, not lost
        if edge.channel not in channel_order:
            channel_order.append(edge.channel)
    linked = {edge.service for edge in sends + receives}
    senders = [name for name in services if any(edge.service == name for edge in sends) or name not in linked]
    receivers = [name for name in services if any(edge.service == name for edge in receives)]

    out_of: dict[str, list[str]] = {}
    into: dict[str, list[str]] = {}
    channel_from: dict[str, list[str]] = {}
    channel_to: dict[str, list[str]] = {}
    for edge in sends:
        out_of.setdefault(edge.service, []).append(edge.channel)
        channel_from.setdefault(edge.channel, []).append(edge.service)
    for edge in receives:
        into.setdefault(edge.service, []).append(edge.channel)
        channel_to.setdefault(edge.channel, []).append(edge.service)
    for _ in range(SWEEPS):
        index = {name: i for i, name in enumerate(channel_order)}
        senders = _barycentre(senders, out_of, index)
        receivers = _barycentre(receivers, into, index)
        left = {name: i for i, name in enumerate(senders)}
        right = {name: i for i, name in enumerate(receivers)}
        scale = max(len(channel_order), 1)
        sender_scale = scale / max(len(senders), 1)
        receiver_scale = scale / max(len(receivers), 1)
        both = {name: [f"s:{s}" for s in channel_from.get(name, [])] + [f"r:{r}" for r in channel_to.get(name, [])]
                for name in channel_order}
        spots = {**{f"s:{k}": v * sender_scale for k, v in left.items()},
                 **{f"r:{k}": v * receiver_scale for k, v in right.items()}}
        channel_order = _barycentre_float(channel_order, both, spots)

    short = short_types(dict.fromkeys(event.type for event in catalog.events))
    labels = {id(edge): label_of(edge.types, short) for edge in sends + receives}

    def label_width(edges: list[_Edge]) -> float:
        return max(max((len(labels[id(edge)]) for edge in edges), default=0) * SMALL + 2 * PAD, 40.0)

    send_width, receive_width = label_width(sends), label_width(receives)

    def service_lines(name: str) -> tuple[str, str]:
        service = services[name]
        return shorten(service.title, MAX_NAME), shorten(name, MAX_NAME) if name != service.title else ""

    def channel_lines(name: str) -> tuple[str, str]:
        channel = channels.get(name)
        if channel is None:
            return ("no channel named" if name == NO_CHANNEL else shorten(name, MAX_NAME)), ""
        return shorten(name, MAX_NAME), shorten(f"{channel.protocol} {channel.address}", MAX_DETAIL)

    def box_width(lines: Iterable[tuple[str, str]]) -> float:
        return max((max(len(first) * BOLD, len(second) * SMALL) for first, second in lines), default=8.0) + 2 * PAD

    sender_width = box_width(service_lines(name) for name in senders)  # each column as wide as its own names
    receiver_width = box_width(service_lines(name) for name in receivers)
    channel_width = box_width(channel_lines(name) for name in channel_order)
    x_senders = MARGIN
    x_channels = x_senders + sender_width + send_width + CROSS
    x_receivers = x_channels + channel_width + CROSS  # the receivers' labels, then their boxes
    width = x_receivers + receive_width + (receiver_width if receivers else 0) + MARGIN

    nodes: list[Node] = []
    arrows: list[Arrow] = []
    sender_ports: dict[tuple[str, str], float] = {}
    receiver_ports: dict[tuple[str, str], float] = {}

    def stack(names: list[str], ports_of: dict[str, list[str]], order: dict[str, int], x: float, width: float,
              kind: str, ports: dict[tuple[str, str], float]) -> float:
        y: float = MARGIN
        for name in names:
            rows = sorted(ports_of.get(name, []), key=lambda channel: order[channel])
            height = max(NODE, len(rows) * ROW + 8)
            first, second = service_lines(name)
            service = services[name]
            nodes.append(Node("service", name, first, second, _service_title(service, kind), service_href(name),
                              x, y, width, height))
            for row, channel in enumerate(rows):
                ports[(name, channel)] = y + 4 + ROW * (row + 0.5) + (height - 8 - len(rows) * ROW) / 2
            y += height + GAP
        return y

    order = {name: i for i, name in enumerate(channel_order)}
    bottom = max(
        stack(senders, out_of, order, x_senders, sender_width, "sends", sender_ports),
        stack(receivers, into, order, x_receivers + receive_width, receiver_width, "receives", receiver_ports),
    )
    # Channels: each as near the middle of its arrows as the ones above leave room for.
    y: float = MARGIN
    channel_in: dict[tuple[str, str], float] = {}
    channel_out: dict[tuple[str, str], float] = {}
    left_position = {name: i for i, name in enumerate(senders)}
    right_position = {name: i for i, name in enumerate(receivers)}
    for name in channel_order:
        incoming = sorted(channel_from.get(name, []), key=lambda service: left_position[service])
        outgoing = sorted(channel_to.get(name, []), key=lambda service: right_position[service])
        height = max(NODE, max(len(incoming), len(outgoing)) * ROW + 8)
        ends = [sender_ports[(service, name)] for service in incoming] + [receiver_ports[(service, name)] for service in outgoing]
        wanted = sum(ends) / len(ends) - height / 2 if ends else y
        top = max(y, wanted)
        first, second = channel_lines(name)
        channel = channels.get(name)
        full = f"Channel {name}" + (f": {channel.protocol} {channel.address}" if channel else "")
        if channel is not None and channel.description:
            full += f". {channel.description}"
        nodes.append(Node("channel", name, first, second, full, channel_href(name) if channel else None,
                          x_channels, top, channel_width, height))
        for row, service in enumerate(incoming):
            channel_in[(service, name)] = top + height / 2 + ROW * (row - (len(incoming) - 1) / 2)
        for row, service in enumerate(outgoing):
            channel_out[(service, name)] = top + height / 2 + ROW * (row - (len(outgoing) - 1) / 2)
        y = top + height + GAP
    bottom = max(float(bottom), y)

    def curve(x1: float, y1: float, x2: float, y2: float) -> str:
        middle = (x1 + x2) / 2
        return f"C{middle:g} {y1:g} {middle:g} {y2:g} {x2:g} {y2:g}"

    for edge in sends:
        y1, y2 = sender_ports[(edge.service, edge.channel)], channel_in[(edge.service, edge.channel)]
        start = x_senders + sender_width
        turn = start + send_width
        arrows.append(Arrow(
            f"M{start:g} {y1:g} H{turn:g} {curve(turn, y1, x_channels, y2)}", labels[id(edge)],
            f"{services[edge.service].title} sends on {edge.channel or 'no channel named'}: {', '.join(edge.types)}",
            start + PAD / 2, y1 - 5, "start",
        ))
    for edge in receives:
        y1, y2 = channel_out[(edge.service, edge.channel)], receiver_ports[(edge.service, edge.channel)]
        start = x_channels + channel_width
        end = x_receivers + receive_width
        arrows.append(Arrow(
            f"M{start:g} {y1:g} {curve(start, y1, x_receivers, y2)} H{end:g}", labels[id(edge)],
            f"{services[edge.service].title} receives from {edge.channel or 'no channel named'}: {', '.join(edge.types)}",
            end - PAD, y2 - 5, "end",
        ))
    return ServiceMap(round(width), round(bottom - GAP + MARGIN), tuple(nodes), tuple(arrows),
                      len(services), len(channels))


def _barycentre_float(items: list[str], neighbours: dict[str, list[str]], positions: dict[str, float]) -> list[str]:
    def key(pair: tuple[int, str]) -> tuple[float, int]:
        index, item = pair
        found = [positions[other] for other in neighbours.get(item, []) if other in positions]
        return (sum(found) / len(found) if found else float(index), index)

    return [item for _, item in sorted(enumerate(items), key=key)]


def _service_title(service: Service, role: str) -> str:
    text = f"Service {service.title}" + (f" ({service.name})" if service.title != service.name else "")
    if service.owner is not None and service.owner.name:
        text += f", owned by {service.owner.name}"
    return text
