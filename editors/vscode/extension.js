// Starts `evcat lsp` for YAML files; everything else happens in the server.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("evcat").get("command") || ["evcat", "lsp"];
  client = new LanguageClient(
    "evcat",
    "evcat",
    { command, args },
    {
      documentSelector: [{ scheme: "file", language: "yaml" }],
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.{yaml,yml}") },
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
