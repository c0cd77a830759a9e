// Parse AsyncAPI documents with the official parser, in two versions: the
// latest 3.x and 3.4.0 (which EventCatalog's AsyncAPI generator pins); print
// each parser's diagnostics per file as JSON.
// Usage: node validate-asyncapi.mjs FILE...
import { Parser, fromFile } from "@asyncapi/parser";
import { Parser as Parser340, fromFile as fromFile340 } from "parser-340";

const parsers = { latest: [new Parser(), fromFile], "3.4.0": [new Parser340(), fromFile340] };
const results = {};
for (const file of process.argv.slice(2)) {
  results[file] = {};
  for (const [name, [parser, load]] of Object.entries(parsers)) {
    let document = null;
    let diagnostics = [];
    try {
      ({ document, diagnostics } = await load(parser, file).parse());
    } catch (error) {
      diagnostics = [{ code: "exception", severity: 0, message: String(error && error.stack || error), path: [] }];
    }
    results[file][name] = {
      parsed: Boolean(document),
      version: document ? document.version() : null,
      channels: document ? document.channels().length : 0,
      operations: document ? document.operations().length : 0,
      messages: document ? document.allMessages().length : 0,
      diagnostics: diagnostics.map((d) => ({ code: d.code, severity: d.severity, message: d.message, path: d.path })),
    };
  }
}
process.stdout.write(JSON.stringify(results, null, 2));
