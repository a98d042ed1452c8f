// Writes the .hlog fixtures of ingest/hlog_reader_test.cc with HdrHistogram's own
// HistogramLogWriter (Debian's libhdrhistogram-java), from values known here, and beside each
// NAME.hlog a NAME.expected file: per interval its line, tag, total count, every recorded value
// with its count, and the percentiles the Java histogram itself reports. See README.md.
//
//   javac -cp /usr/share/java/hdrhistogram.jar WriteHlogs.java
//   TZ=UTC java -cp /usr/share/java/hdrhistogram.jar:. WriteHlogs .           (the fixtures)
//   TZ=UTC java -cp /usr/share/java/hdrhistogram.jar:. WriteHlogs --bench N F (N intervals, F)
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

public class WriteHlogs {
  static final double[] PERCENTILES = {0, 50, 90, 99, 99.9, 100};

  // One interval to log: when, for how long, its tag, its histogram and the values put in it.
  static final class Interval {
    final long startMs;
    final long lengthMs;
    final String tag;
    final Histogram histogram;
    final TreeMap<Long, Long> values = new TreeMap<>();

    Interval(long startMs, long lengthMs, String tag, Histogram histogram) {
      this.startMs = startMs;
      this.lengthMs = lengthMs;
      this.tag = tag;
      this.histogram = histogram;
      histogram.setStartTimeStamp(startMs);
      histogram.setEndTimeStamp(startMs + lengthMs);
      if (tag != null) histogram.setTag(tag);
    }

    Interval record(long value, long count) {
      histogram.recordValueWithCount(value, count);
      values.merge(value, count, Long::sum);
      return this;
    }
  }

  // Writes NAME.hlog and NAME.expected. startTimeMs < 0: no StartTime header; baseTimeMs < 0:
  // no BaseTime header (and absolute timestamps); else timestamps are relative to baseTimeMs.
  static void write(String dir, String name, long startTimeMs, long baseTimeMs,
                    List<Interval> intervals) throws Exception {
    try (PrintStream log = new PrintStream(new FileOutputStream(dir + "/" + name + ".hlog"));
         PrintStream want = new PrintStream(new FileOutputStream(dir + "/" + name + ".expected"))) {
      HistogramLogWriter writer = new HistogramLogWriter(log);
      writer.outputLogFormatVersion();
      if (startTimeMs >= 0) writer.outputStartTime(startTimeMs);
      if (baseTimeMs >= 0) {
        writer.setBaseTime(baseTimeMs);
        writer.outputBaseTime(baseTimeMs);
      }
      writer.outputLegend();
      want.println("# interval LINE START_MS LENGTH_MS TAG COUNT; value V COUNT; percentile P V");
      // Lines: the version, the optional headers, the legend, then one per interval.
      int line = 2 + (startTimeMs >= 0 ? 1 : 0) + (baseTimeMs >= 0 ? 1 : 0);
      for (Interval i : intervals) {
        writer.outputIntervalHistogram(i.histogram);
        ++line;
        want.printf("interval %d %d %d %s %d%n", line, i.startMs, i.lengthMs,
                    i.tag == null ? "-" : i.tag, i.histogram.getTotalCount());
        for (var e : i.values.entrySet()) want.printf("value %d %d%n", e.getKey(), e.getValue());
        if (i.histogram.getTotalCount() > 0) {
          for (double p : PERCENTILES) {
            want.printf("percentile %s %d%n", p, i.histogram.getValueAtPercentile(p));
          }
        }
      }
    }
  }

  static Histogram auto3() { return new Histogram(3); }

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("--bench")) {
      bench(Integer.parseInt(args[1]), args[2]);
      return;
    }
    final String dir = args.length > 0 ? args[0] : ".";
    final long t0 = 1_795_000_000_000L;  // unix ms

    // Five 1-second intervals, timestamps relative to StartTime (as jHiccup and wrk2 write):
    // values below 2048 (exact at 3 digits), around 10^6 (512 wide) and 10^9 (2^19 wide).
    List<Interval> basic = new ArrayList<>();
    for (int k = 0; k < 5; ++k) {
      Interval i = new Interval(t0 + 1000L * k, 1000, null, auto3());
      for (long v = 1; v <= 1000; v += 7) i.record(v, 1 + (v % 3));
      i.record(1_000_000L + k, 10 * (k + 1)).record(1_234_567_890L, 3);
      basic.add(i);
    }
    write(dir, "basic", t0, t0, basic);

    // Absolute timestamps, no headers at all (HistogramLogWriter with base time 0); one empty
    // interval; a quarter-second cadence, so four intervals share each second.
    List<Interval> absolute = new ArrayList<>();
    for (int k = 0; k < 8; ++k) {
      Interval i = new Interval(t0 + 250L * k, 250, null, auto3());
      if (k != 5) i.record(100 + k, 7).record(50_000 + 1000L * k, 2);
      absolute.add(i);
    }
    write(dir, "absolute", -1, -1, absolute);

    // Tags: untagged, "read" and "write" intervals interleaved; and a 10-second interval.
    List<Interval> tagged = new ArrayList<>();
    for (int k = 0; k < 3; ++k) {
      tagged.add(new Interval(t0 + 1000L * k, 1000, null, auto3()).record(10 + k, 5));
      tagged.add(new Interval(t0 + 1000L * k, 1000, "read", auto3()).record(2000 + k, 4));
      tagged.add(new Interval(t0 + 1000L * k, 1000, "write", auto3()).record(3_000_000 + k, 6));
    }
    tagged.add(new Interval(t0 + 3000, 10_000, null, auto3()).record(77, 100));
    write(dir, "tagged", t0, t0, tagged);

    // Other layouts: 1 significant digit (buckets 1/16 of their power of two), 5 digits, a
    // lowest discernible value of 1000 (unit magnitude 9), and values up to 2^62.
    List<Interval> layouts = new ArrayList<>();
    Interval coarse = new Interval(t0, 1000, null, new Histogram(1, 1L << 40, 1));
    for (long v = 1; v < 100_000; v = v * 3 + 1) coarse.record(v, v % 7 + 1);
    layouts.add(coarse);
    Interval fine = new Interval(t0 + 1000, 1000, null, new Histogram(1, 1L << 40, 5));
    for (long v = 1; v < 100_000_000; v = v * 5 + 3) fine.record(v, 2);
    layouts.add(fine);
    Interval unit = new Interval(t0 + 2000, 1000, null, new Histogram(1000, 1L << 42, 2));
    for (long v = 1000; v < 10_000_000_000L; v = v * 7 + 11) unit.record(v, 3);
    layouts.add(unit);
    Interval huge = new Interval(t0 + 3000, 1000, null, auto3());
    huge.record(1, 1).record(1L << 40, 2).record((1L << 62) - 1, 5).record(Long.MAX_VALUE / 2, 1);
    layouts.add(huge);
    write(dir, "layouts", t0, t0, layouts);
  }

  // A long log for measuring import speed: N one-second intervals, each of 5,000 latencies
  // drawn from a log-normal around 2 ms (in ns), at 3 digits as wrk2 and jHiccup record.
  static void bench(int n, String path) throws Exception {
    Random random = new Random(42);
    final long t0 = 1_795_000_000_000L;
    try (PrintStream log = new PrintStream(new FileOutputStream(path))) {
      HistogramLogWriter writer = new HistogramLogWriter(log);
      writer.outputLogFormatVersion();
      writer.outputStartTime(t0);
      writer.setBaseTime(t0);
      writer.outputLegend();
      Histogram h = new Histogram(3600L * 1_000_000_000L, 3);
      for (int k = 0; k < n; ++k) {
        h.reset();
        for (int j = 0; j < 5000; ++j) {
          h.recordValue((long) (2e6 * Math.exp(0.8 * random.nextGaussian())));
        }
        h.setStartTimeStamp(t0 + 1000L * k);
        h.setEndTimeStamp(t0 + 1000L * k + 1000);
        writer.outputIntervalHistogram(h);
      }
    }
  }
}
