// Compile JSON Schemas with ajv in strict mode (draft 2020-12, ajv-formats),
// all in one instance so $refs between them resolve by $id, then validate
// events against them. Input on stdin: {"schemas": [FILE...], "instances":
// [[SCHEMA $id, EVENT]...]}. Prints {"schemas": {FILE: error|null},
// "instances": [errors|null...]} as JSON.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const request = JSON.parse(readFileSync(0, "utf8"));
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const schemas = {};
const loaded = request.schemas.map((file) => [file, JSON.parse(readFileSync(file, "utf8"))]);
for (const [file, schema] of loaded) {
  try {
    ajv.addSchema(schema);
    schemas[file] = null;
  } catch (error) {
    schemas[file] = String(error.message || error);
  }
}
const compiled = {};
for (const [file, schema] of loaded) {
  if (schemas[file] !== null) continue;
  try {
    compiled[schema.$id] = ajv.getSchema(schema.$id); // compiles: strict mode reports here
  } catch (error) {
    schemas[file] = String(error.message || error);
  }
}
const instances = request.instances.map(([id, event]) => {
  const validate = compiled[id];
  if (!validate) return [`no compiled schema ${id}`];
  return validate(event) ? null : validate.errors.map((e) => `${e.instancePath} ${e.message}`);
});
process.stdout.write(JSON.stringify({ schemas, instances }, null, 2));
