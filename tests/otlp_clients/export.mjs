// Records a fixed workload with the OpenTelemetry JS metrics SDK and exports it twice (two
// cumulative exports: the agent must turn them into deltas) with each of the two OTLP/HTTP
// exporters: protobuf with gzip (@opentelemetry/exporter-metrics-otlp-proto) under the metric
// prefix "pb", and JSON (@opentelemetry/exporter-metrics-otlp-http) under "js".
//   tests/otlp_clients/run.sh export.mjs http://127.0.0.1:PORT
// tests/otlp_clients_system_test.cc restates the workload and checks what trailmap stored. Prints
// one JSON line: each export's result code (0 = success) by prefix.
import { metrics } from '@opentelemetry/api';
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationType,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';

const base = process.argv[2];
if (!base) {
  console.error('usage: export.mjs http://HOST:PORT');
  process.exit(2);
}

async function run(prefix, exporter) {
  const codes = [];
  const send = exporter.export.bind(exporter);
  exporter.export = (data, done) =>
    send(data, (result) => {
      codes.push(result.code);
      if (result.error) console.error(`${prefix}: ${result.error}`);
      done(result);
    });
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': `otlp-test-${prefix}` }),
    readers: [reader],
    views: [
      {
        instrumentName: `${prefix}.latency`,
        aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM, options: { maxSize: 160 } },
      },
    ],
  });
  const meter = provider.getMeter('trailmap-test');
  // An exponential histogram of 1..100 ms; an explicit-bucket one (the SDK's default bounds) of
  // 100..4000 B; a counter of 30 on route /a and 12 on /b; an up-down counter ending at 3; a
  // gauge ending at 23.25.
  const latency = meter.createHistogram(`${prefix}.latency`, { unit: 'ms' });
  const size = meter.createHistogram(`${prefix}.size`, { unit: 'By' });
  const requests = meter.createCounter(`${prefix}.requests`);
  const queue = meter.createUpDownCounter(`${prefix}.queue`);
  const temperature = meter.createGauge(`${prefix}.temperature`, { unit: 'Cel' });
  // Two halves, each followed by an export: odd values first, then even ones.
  for (const half of [1, 0]) {
    for (let v = 1; v <= 100; v++) if (v % 2 === half) latency.record(v);
    for (let v = 100; v <= 4000; v += 100) if ((v / 100) % 2 === half) size.record(v);
    for (let i = 0; i < 15; i++) requests.add(1, { route: '/a' });
    for (let i = 0; i < 6; i++) requests.add(1, { route: '/b' });
    queue.add(half ? 5 : -2);
    temperature.record(half ? 21.5 : 23.25);
    await reader.forceFlush();
  }
  await provider.shutdown();
  return codes;
}

const out = {};
out.pb = await run('pb', new ProtoExporter({ url: `${base}/v1/metrics`, compression: 'gzip' }));
out.js = await run('js', new JsonExporter({ url: `${base}/v1/metrics` }));
console.log(JSON.stringify(out));
metrics.disable();
