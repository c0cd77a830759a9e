// Generate TypeScript and Python models from AsyncAPI documents with Modelina,
// with its default options (as a user would), and Python once more with the
// model-name option of the README. TypeScript goes to OUT/<n>/ts/
// (one file per model, for tsc), Python to OUT/<n>/py/; prints the model
// names per document and language as JSON, and (``all``) every model each
// generator's generate() returns, written or not (an empty name: a model the
// generator cannot render, which generateToFiles leaves out in silence).
// Usage: node modelina.mjs OUT FILE...
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  FormatHelpers,
  PythonFileGenerator,
  PythonGenerator,
  TypeScriptFileGenerator,
  TypeScriptGenerator,
  pythonDefaultModelNameConstraints,
} from "@asyncapi/modelina";

// The one option a Python user sets to keep evcat's class names (README): Modelina's
// default Python formatter merges numbers (V2_0_0 -> V200); this keeps them apart.
const keepNames = {
  constraints: {
    modelName: pythonDefaultModelNameConstraints({ NAMING_FORMATTER: (value) => FormatHelpers.toPascalCase(value) }),
  },
};

const [out, ...files] = process.argv.slice(2);
const results = {};
for (const [index, file] of files.entries()) {
  const input = readFileSync(file, "utf8");
  const result = { typescript: [], python: [], python_kept: [], all: {}, error: null };
  try {
    const ts = join(out, String(index), "ts");
    mkdirSync(ts, { recursive: true });
    const tsModels = await new TypeScriptFileGenerator().generateToFiles(input, ts, { exportType: "named" }, true);
    result.typescript = tsModels.map((m) => ({ name: m.modelName, kind: m.model.constructor.name }));
    const py = join(out, String(index), "py");
    mkdirSync(py, { recursive: true });
    const pyModels = await new PythonFileGenerator().generateToFiles(input, py, {}, true);
    result.python = pyModels.map((m) => ({ name: m.modelName, kind: m.model.constructor.name }));
    const kept = join(out, String(index), "py-kept");
    mkdirSync(kept, { recursive: true });
    const keptModels = await new PythonFileGenerator(keepNames).generateToFiles(input, kept, {}, true);
    result.python_kept = keptModels.map((m) => ({ name: m.modelName, kind: m.model.constructor.name }));
    for (const [language, generator] of [
      ["typescript", new TypeScriptGenerator()],
      ["python", new PythonGenerator()],
      ["python_kept", new PythonGenerator(keepNames)],
    ]) {
      const models = await generator.generate(input);
      result.all[language] = models.map((m) => ({ name: m.modelName, kind: m.model.constructor.name, rendered: m.result !== "" }));
    }
  } catch (error) {
    result.error = String(error && error.stack || error);
  }
  results[file] = result;
}
process.stdout.write(JSON.stringify(results, null, 2));
