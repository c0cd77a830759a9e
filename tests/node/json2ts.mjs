// Compile JSON Schemas to TypeScript with json-schema-to-typescript, one .ts
// file per schema into OUT (for tsc --strict). Prints {FILE: error|null}.
// Usage: node json2ts.mjs OUT FILE...
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compile } from "json-schema-to-typescript";

const [out, ...files] = process.argv.slice(2);
const results = {};
for (const [index, file] of files.entries()) {
  try {
    const schema = JSON.parse(readFileSync(file, "utf8"));
    const ts = await compile(schema, `Schema${index}`, { bannerComment: "", cwd: out, declareExternallyReferenced: true });
    writeFileSync(join(out, `schema${index}.ts`), ts);
    results[file] = null;
  } catch (error) {
    results[file] = String(error.stack || error);
  }
}
process.stdout.write(JSON.stringify(results, null, 2));
