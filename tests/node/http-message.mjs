// The CloudEvents JavaScript SDK's HTTP binding, as a JavaScript program uses it.
// Usage: node http-message.mjs encode structured|binary EVENT_JSON_FILE
//          prints the HTTP message the SDK writes: {"headers", "body"}
//        node http-message.mjs decode MESSAGE_JSON_FILE   ({"headers", "body"})
//          prints the event the SDK reads (its JSON form), or {"error"}
import { readFileSync } from "node:fs";
import { CloudEvent, HTTP } from "cloudevents";

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === "encode") {
    const [mode, file] = rest;
    const event = new CloudEvent(JSON.parse(readFileSync(file, "utf-8")));
    const message = mode === "binary" ? HTTP.binary(event) : HTTP.structured(event);
    const body = message.body === undefined || message.body === null ? "" : typeof message.body === "string" ? message.body : JSON.stringify(message.body);
    process.stdout.write(JSON.stringify({ headers: message.headers, body }) + "\n");
  } else {
    const message = JSON.parse(readFileSync(rest[0], "utf-8"));
    const event = HTTP.toEvent({ headers: message.headers, body: message.body });
    process.stdout.write(JSON.stringify(event.toJSON()) + "\n");
  }
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error) }) + "\n");
}
