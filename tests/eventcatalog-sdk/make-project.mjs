// Writes an EventCatalog project with EventCatalog's own writer
// (@eventcatalog/sdk, MIT) from AsyncAPI documents read by the official
// @asyncapi/parser, for tests/test_import_eventcatalog.py: the project's
// format (folders, front matter, schema files) is theirs, not evcat's.
// Usage: node make-project.mjs PROJECT_DIR ASYNCAPI_DOCUMENT...
// Each document gives a domain (its info.title) holding one service (the
// application) that sends and receives the messages of its operations; each
// message is an event (id: the message's id, version: info.version) with its
// payload as schema.json, on the channels it travels on (address, protocols
// of the document's servers; ids prefixed with the domain's). A message already written by an earlier
// document is only referenced. Run by tests/install-components.sh.
import fs from "node:fs";
import path from "node:path";
import { Parser } from "@asyncapi/parser";
import utils from "@eventcatalog/sdk";

const [project, ...documents] = process.argv.slice(2);
if (!project || documents.length === 0) {
  console.error("usage: node make-project.mjs PROJECT_DIR ASYNCAPI_DOCUMENT...");
  process.exit(2);
}
fs.rmSync(project, { recursive: true, force: true });
fs.mkdirSync(project, { recursive: true });
const sdk = utils(path.resolve(project));
const parser = new Parser();
const slug = (text) => text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
const withoutParserKeys = (value) => {
  if (Array.isArray(value)) return value.map(withoutParserKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).filter(([key]) => !key.startsWith("x-parser-"))
      .map(([key, item]) => [key, withoutParserKeys(item)]));
  }
  return value;
};
// gray-matter cannot write undefined values
const defined = (object) => Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined && value !== null));
const JSON_SCHEMA = /^application\/(schema\+json|schema\+yaml|vnd\.aai\.asyncapi(\+json|\+yaml)?)(;.*)?$/;

for (const file of documents) {
  const { document, diagnostics } = await parser.parse(fs.readFileSync(file, "utf8"), { source: path.resolve(file) });
  if (!document) {
    console.error(`${file}: not parsed: ${diagnostics.filter((d) => d.severity === 0).map((d) => d.message).join("; ")}`);
    process.exit(1);
  }
  const info = document.info();
  const version = info.version();
  const domainId = slug(info.title());
  const serviceId = `${domainId}-service`;
  const protocols = [...new Set(document.servers().all().map((server) => server.protocol()))];
  const sends = new Map();
  const receives = new Map();
  const channelsOf = new Map();
  for (const operation of document.operations().all()) {
    const pointers = operation.action() === "send" ? sends : receives;
    for (const message of operation.messages().all()) {
      const id = message.id();
      const to = operation.channels().all().map((channel) => ({ id: `${domainId}.${channel.id()}`, version }));
      const known = pointers.get(id) ?? [];
      pointers.set(id, [...known, ...to.filter((c) => !known.some((k) => k.id === c.id))]);
      channelsOf.set(id, [...(channelsOf.get(id) ?? []), ...to]);
    }
  }
  for (const channel of document.channels().all()) {
    await sdk.writeChannel(defined({
      id: `${domainId}.${channel.id()}`, name: channel.id(), version, address: channel.address(),
      protocols, summary: channel.description(), markdown: channel.description() ?? "",
    }));
  }
  await sdk.writeDomain({ id: domainId, name: info.title(), version, markdown: info.description() ?? "" });
  const pointer = (map, key) => [...map].map(([id, channels]) => ({ id, version, [key]: channels }));
  await sdk.writeServiceToDomain({
    id: serviceId, name: `${info.title()} application`, version, markdown: "",
    sends: pointer(sends, "to"), receives: pointer(receives, "from"),
  }, { id: domainId });
  for (const message of document.allMessages().all()) {
    const id = message.id();
    if (!channelsOf.has(id) || (await sdk.getEvent(id, version))) continue;
    // a 3.x multi-format payload ({schemaFormat, schema}): the parser's json() keeps the wrapper
    const json = message.payload()?.json();
    const payload = json && typeof json.schemaFormat === "string" && "schema" in json ? json.schema : json;
    const schema = payload && JSON_SCHEMA.test(message.schemaFormat() ?? "application/vnd.aai.asyncapi+json");
    await sdk.writeEventToService(defined({
      id, name: message.name() ?? message.title() ?? id, version,
      summary: message.summary(), markdown: message.description() ?? "",
      channels: channelsOf.get(id).filter((c, i, all) => all.findIndex((o) => o.id === c.id) === i),
      ...(schema ? { schemaPath: "schema.json" } : {}),
    }), { id: serviceId });
    if (schema) {
      await sdk.addSchemaToEvent(id, { schema: JSON.stringify(withoutParserKeys(payload), null, 2), fileName: "schema.json" }, version);
    }
  }
}
console.log(`wrote ${project}`);
