// Parse AsyncAPI documents with the official parser; print diagnostics as JSON.
// Usage: node validate-asyncapi.mjs FILE...
import { readFileSync } from "node:fs";
import { Parser, fromFile } from "@asyncapi/parser";

const parser = new Parser();
const results = {};
for (const file of process.argv.slice(2)) {
  const { document, diagnostics } = await fromFile(parser, file).parse();
  results[file] = {
    parsed: Boolean(document),
    version: document ? document.version() : null,
    channels: document ? document.channels().length : 0,
    operations: document ? document.operations().length : 0,
    messages: document ? document.allMessages().length : 0,
    diagnostics: diagnostics.map((d) => ({ code: d.code, severity: d.severity, message: d.message, path: d.path })),
  };
}
process.stdout.write(JSON.stringify(results, null, 2));
