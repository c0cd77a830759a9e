// Generate TypeScript and Python models from AsyncAPI documents with Modelina,
// with its default options (as a user would). TypeScript goes to OUT/<n>/ts/
// (one file per model, for tsc), Python to OUT/<n>/py/; prints the model
// names per document and language as JSON.
// Usage: node modelina.mjs OUT FILE...
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PythonFileGenerator, TypeScriptFileGenerator } from "@asyncapi/modelina";

const [out, ...files] = process.argv.slice(2);
const results = {};
for (const [index, file] of files.entries()) {
  const input = readFileSync(file, "utf8");
  const result = { typescript: [], python: [], error: null };
  try {
    const ts = join(out, String(index), "ts");
    mkdirSync(ts, { recursive: true });
    const tsModels = await new TypeScriptFileGenerator().generateToFiles(input, ts, { exportType: "named" }, true);
    result.typescript = tsModels.map((m) => ({ name: m.modelName, kind: m.model.constructor.name }));
    const py = join(out, String(index), "py");
    mkdirSync(py, { recursive: true });
    const pyModels = await new PythonFileGenerator().generateToFiles(input, py, {}, true);
    result.python = pyModels.map((m) => ({ name: m.modelName, kind: m.model.constructor.name }));
  } catch (error) {
    result.error = String(error && error.stack || error);
  }
  results[file] = result;
}
process.stdout.write(JSON.stringify(results, null, 2));
