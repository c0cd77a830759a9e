// Count the importable messages of AsyncAPI documents with the official
// parser (an independent count for tests/test_import_asyncapi.py): messages
// whose payload is JSON Schema (schemaFormat absent, a JSON Schema or an
// AsyncAPI Schema media type). Messages are told apart by their id and what
// they are (their JSON without the parser's own x-parser-* keys), so a
// message that several channels, operations or documents use counts once.
// Usage: node count-asyncapi-messages.mjs GROUP...
// A GROUP is one import: its files joined with the path delimiter (":").
// Prints {GROUP: {importable, other, errors}} as JSON.
import { delimiter } from "node:path";
import { Parser, fromFile } from "@asyncapi/parser";

const JSON_SCHEMA = /^application\/(schema\+(json|yaml)|vnd\.aai\.asyncapi(\+(json|yaml))?)(;|$)/;
const parser = new Parser();
function plain(value) {
  return JSON.stringify(value, (key, inner) => (key.startsWith("x-parser-") ? undefined : inner));
}
const results = {};
for (const group of process.argv.slice(2)) {
  const seen = new Set();
  const result = { importable: 0, other: 0, errors: [] };
  for (const file of group.split(delimiter)) {
    const { document, diagnostics } = await fromFile(parser, file).parse();
    if (!document) {
      result.errors.push({ file, diagnostics: diagnostics.filter((d) => d.severity === 0).map((d) => d.message) });
      continue;
    }
    for (const message of document.allMessages()) {
      const id = String(message.id() ?? "");
      const key = (id.startsWith("<anonymous-") ? "" : id) + " " + plain(message.json()); // 2.x makes ids up per document
      if (seen.has(key)) continue;
      seen.add(key);
      const format = message.schemaFormat();
      if (!format || JSON_SCHEMA.test(format)) result.importable += 1;
      else result.other += 1;
    }
  }
  results[group] = result;
}
process.stdout.write(JSON.stringify(results));
