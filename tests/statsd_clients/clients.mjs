// Sends a fixed workload to a statsd port with two real npm clients, hot-shots and
// statsd-client; tests/statsd_clients_system_test.cc checks that trailmap stored exactly it.
//   tests/statsd_clients/run.sh clients.mjs PORT
// What is sent is fixed here and restated in the C++ test (the expected totals are written out
// there, not read back from this script). Sampling is made exact: hot-shots keeps a sampled
// call when Math.random() < rate (lib/statsd.js, sendStat), so Math.random is replaced by a
// sequence alternating 0.25 and 0.75 — at rate 0.5 exactly every other sampled call is sent, the
// first one included, each tagged @0.5 (unsampled calls do not draw). Prints one JSON line: how many calls each client made.
import StatsD from 'hot-shots';
import StatsdClient from 'statsd-client';

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: clients.mjs PORT');
  process.exit(2);
}

let flip = 0;
Math.random = () => (flip++ % 2 === 0 ? 0.25 : 0.75);

function closeHotShots(client) {
  return new Promise((resolve, reject) => client.close((err) => (err ? reject(err) : resolve())));
}

const errors = [];
const onError = (err) => errors.push(String(err));
let calls = 0;

// hot-shots, unbuffered: every call its own datagram. Global tag env:test on every line.
const hs = new StatsD({ host: '127.0.0.1', port, prefix: 'hs.', globalTags: { env: 'test' },
                        errorHandler: onError });
for (let i = 0; i < 40; i++) {
  // Timings 1..40 ms; with op:read for odd i, op:write for even i.
  hs.timing('timing', i + 1, { op: i % 2 ? 'read' : 'write' });
  // 80 increments of 2 at rate 0.5: the first of each pair is sent as hs.hits:2|c|@0.5 (40
  // lines standing for 4 each: 160 in all).
  hs.increment('hits', 2, 0.5);
  hs.increment('hits', 2, 0.5);
  calls += 3;
  if (i < 20) {
    hs.decrement('hits', 1);  // 20 x -1: the counter's total is 160 - 20 = 140
    calls++;
  }
  // Histograms of bytes (the test's agent config: [[statsd_unit]] hs.resp.* = B): 100 .. 4000.
  hs.histogram('resp.bytes', 100 * (i + 1));
  // Distributions in ms at rate 0.5, tags as a list: of each pair the first is sent (values
  // 0.5, 1.5, ..., 39.5 ms) standing for 2 events, the second (999 ms) is not: count 80.
  hs.distribution('dist', i + 0.5, 0.5, ['tier:gold']);
  hs.distribution('dist', 999, 0.5, ['tier:gold']);
  calls += 3;
}
// A gauge: set, then deltas; its last value is 10 + 5 + 5 - 3 = 17.
hs.gauge('queue', 10);
hs.gaugeDelta('queue', 5);
hs.gaugeDelta('queue', 5);
hs.gaugeDelta('queue', -3);
calls += 4;
await closeHotShots(hs);

// hot-shots, buffered into one datagram (so all of it lands in one receive second): a set of 5
// distinct members sent 15 times.
const hsSet = new StatsD({ host: '127.0.0.1', port, prefix: 'hs.', maxBufferSize: 60000,
                           bufferFlushInterval: 60000, errorHandler: onError });
for (let i = 0; i < 15; i++) {
  hsSet.set('users', `user${i % 5}`);
  calls++;
}
await closeHotShots(hsSet);

// statsd-client: timing, counter, gauge, set, histogram, distribution, with tags.
const sc = new StatsdClient({ host: '127.0.0.1', port, prefix: 'sc', tags: { app: 'demo' } });
let scCalls = 0;
for (let i = 0; i < 25; i++) {
  sc.timing('timing', 10 * (i + 1), { route: 'home' });  // 10 .. 250 ms
  sc.increment('hits');                                // 25
  sc.increment('hits', 3);                             // 75
  scCalls += 3;
  if (i === 5) {
    // Total 25 + 75 - 10 = 90. Sent mid-stream: a second's sum below 0 would not be drawn.
    sc.decrement('hits', 10);
    scCalls++;
  }
}
sc.gauge('temp', 20);
sc.gaugeDelta('temp', -4);                             // last value 16
sc.histogram('hist', 7);                               // ms by default: 7 ms
sc.distribution('dist', 9, { tier: 'gold' });          // 9 ms
scCalls += 4;
sc.close();
// statsd-client sends on a timer; close() flushes what is buffered. Give the socket a moment to
// hand the datagram to the kernel before the process exits.
await new Promise((resolve) => setTimeout(resolve, 200));

if (errors.length) {
  console.error(errors.join('\n'));
  process.exit(1);
}
console.log(JSON.stringify({ hot_shots_calls: calls, statsd_client_calls: scCalls }));
