#!/usr/bin/env bash
# Has the official xRegistry CLI (xrcg, pinned in the test extras) write a
# handful of xRegistry documents into the folder given ($1) for the import
# tests (tests/test_xregistry.py). The documents' content is written by xrcg's
# own `xrcg manifest ...` commands; this script only calls them. xrcg's manifest
# commands edit an existing file, so each document starts as `{}`. No network:
# the manifest commands are file-backed (xrcg/commands/catalog.py,
# ManifestSubcommands) and the model is the one bundled with xrcg.
set -euo pipefail
out=$1
mkdir -p "$out"
m() { xrcg manifest "$@" >/dev/null; }
start() { echo '{}' >"$out/$1"; }

# 1. Orders: a CloudEvents message group, JSON Schema versions referenced by
#    dataschemauri, a source uritemplate, extensions; a kafka and an http endpoint.
doc=$out/orders.xreg.json
start orders.xreg.json
m schemagroup add --catalog "$doc" --schemagroupid Contoso.Orders --format JsonSchema/draft-07 \
  --description "Payload schemas of the order events"
m schemagroup schema add --catalog "$doc" --schemagroupid Contoso.Orders --schemaid Contoso.Orders.OrderPlaced \
  --versionid 1 --format JsonSchema/draft-07 \
  --schema '{"type": "object", "properties": {"orderId": {"type": "string"}, "total": {"type": "number", "minimum": 0}}, "required": ["orderId"]}'
m schemagroup schema add --catalog "$doc" --schemagroupid Contoso.Orders --schemaid Contoso.Orders.OrderShipped \
  --versionid 1 --format JsonSchema/draft-07 \
  --schema '{"type": "object", "properties": {"orderId": {"type": "string"}, "carrier": {"type": "string", "enum": ["dhl", "ups"]}}, "required": ["orderId", "carrier"]}'
m messagegroup add --catalog "$doc" --messagegroupid Contoso.Orders --envelope CloudEvents/1.0 \
  --description "Events of the order service"
m messagegroup message add --catalog "$doc" --messagegroupid Contoso.Orders --messageid Contoso.Orders.OrderPlaced \
  --envelope cloudevents10 --description "An order was placed" \
  --envelopemetadata-type-value Contoso.Orders.OrderPlaced \
  --envelopemetadata-source-type uritemplate --envelopemetadata-source-value "/orders/{region}" \
  --envelopemetadata "key=tenant,type=string,description=The tenant the order belongs to" \
  --datacontenttype application/json --dataschemaformat JsonSchema/draft-07 \
  --dataschemauri "#/schemagroups/Contoso.Orders/schemas/Contoso.Orders.OrderPlaced"
m messagegroup message add --catalog "$doc" --messagegroupid Contoso.Orders --messageid Contoso.Orders.OrderShipped \
  --envelope cloudevents10 --description "An order left the warehouse" \
  --envelopemetadata-type-value Contoso.Orders.OrderShipped \
  --envelopemetadata-source-value /orders/warehouse \
  --envelopemetadata-subject-description "The order id" \
  --datacontenttype application/json --dataschemaformat JsonSchema/draft-07 \
  --dataschemauri "#/schemagroups/Contoso.Orders/schemas/Contoso.Orders.OrderShipped/versions/1"
m endpoint add --catalog "$doc" --endpointid Contoso.Orders.Kafka --usage producer --protocol kafka \
  --envelope cloudevents10 --messagegroups "#/messagegroups/Contoso.Orders" \
  --protocoloptions-endpoints url=kafka://broker.example.com:9092 --protocoloptions-topic orders
m endpoint add --catalog "$doc" --endpointid Contoso.Orders.Webhook --usage consumer --protocol http \
  --envelope cloudevents10 --messagegroups "#/messagegroups/Contoso.Orders" \
  --protocoloptions-endpoints url=https://orders.example.com/events --protocoloptions-method POST

# 2. Telemetry: CloudEvents with an inline data schema and no schema group;
#    an mqtt and an amqp endpoint.
doc=$out/telemetry.xreg.json
start telemetry.xreg.json
m messagegroup add --catalog "$doc" --messagegroupid Fabrikam.Telemetry --envelope CloudEvents/1.0
m messagegroup message add --catalog "$doc" --messagegroupid Fabrikam.Telemetry --messageid Fabrikam.Telemetry.Reading \
  --envelope cloudevents10 --envelopemetadata-type-value Fabrikam.Telemetry.Reading \
  --envelopemetadata-source-type uritemplate --envelopemetadata-source-value "/devices/{deviceid}" \
  --envelopemetadata "key=sequence,type=integer" \
  --datacontenttype application/json --dataschemaformat JsonSchema/draft-07 \
  --dataschema '{"type": "object", "properties": {"celsius": {"type": "number"}, "at": {"type": "string", "format": "date-time"}}, "required": ["celsius"]}'
m endpoint add --catalog "$doc" --endpointid Fabrikam.Telemetry.Mqtt --usage producer --protocol mqtt50 \
  --envelope cloudevents10 --messagegroups "#/messagegroups/Fabrikam.Telemetry" \
  --protocoloptions-endpoints url=mqtt://broker.example.com:1883
m endpoint add --catalog "$doc" --endpointid Fabrikam.Telemetry.Amqp --usage consumer --protocol amqp10 \
  --envelope cloudevents10 --messagegroups "#/messagegroups/Fabrikam.Telemetry" \
  --protocoloptions-endpoints url=amqps://bus.example.com --protocoloptions-node telemetry

# 3. Plain MQTT and AMQP messages only (no CloudEvents envelope): nothing to import.
doc=$out/plain-messages.xreg.json
start plain-messages.xreg.json
m messagegroup add --catalog "$doc" --messagegroupid Fabrikam.Plain --protocol MQTT/5.0
m messagegroup message add --catalog "$doc" --messagegroupid Fabrikam.Plain --messageid Fabrikam.Plain.Status \
  --protocol mqtt50 --protocoloptions-topic "devices/status" \
  --dataschemaformat JsonSchema/draft-07 --dataschema '{"type": "object"}'
m messagegroup message add --catalog "$doc" --messagegroupid Fabrikam.Plain --messageid Fabrikam.Plain.Command \
  --protocol amqp10 --dataschemaformat JsonSchema/draft-07 --dataschema '{"type": "string"}'
