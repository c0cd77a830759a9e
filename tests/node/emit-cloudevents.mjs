// Delivers one CloudEvent with the official CloudEvents JavaScript SDK's HTTP
// emitter (emitterFor + httpTransport), as a producer written in JavaScript would.
// Usage: node emit-cloudevents.mjs URL structured|binary EVENT_JSON_FILE [TOKEN]
// Prints the receiver's answer as JSON: {"body", "headers"}.
import { readFileSync } from "node:fs";
import { CloudEvent, emitterFor, httpTransport, Mode } from "cloudevents";

const [url, mode, file, token] = process.argv.slice(2);
const event = new CloudEvent(JSON.parse(readFileSync(file, "utf-8")));
const emit = emitterFor(httpTransport(url), {
  mode: mode === "binary" ? Mode.BINARY : Mode.STRUCTURED,
});
const options = token ? { headers: { Authorization: `Bearer ${token}` } } : {};
const response = await emit(event, options);
process.stdout.write(JSON.stringify({ body: response.body, headers: response.headers }) + "\n");
