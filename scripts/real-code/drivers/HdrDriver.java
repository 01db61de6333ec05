// Real-code benchmark driver for HdrHistogram: record latencies and print the percentile distribution,
// as the README shows (Histogram.recordValue, outputPercentileDistribution), plus the compressed
// encoding the log format uses.
import java.nio.ByteBuffer;
import org.HdrHistogram.Histogram;

public class HdrDriver {
  public static void main(String[] args) throws Exception {
    int samples = Integer.parseInt(args[0]);
    Histogram histogram = new Histogram(3_600_000_000L, 3);
    long x = 42;
    for (int i = 0; i < samples; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L; // a fixed pseudo-random sequence
      long latency = 1000 + ((x >>> 33) % 50_000) + (i % 1000 == 0 ? 5_000_000 : 0);
      histogram.recordValue(latency);
    }
    histogram.outputPercentileDistribution(System.out, 5, 1000.0);
    ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
    int bytes = 0;
    for (int i = 0; i < 20; i++) {
      buffer.clear();
      bytes += histogram.encodeIntoCompressedByteBuffer(buffer);
      buffer.flip();
      Histogram copy = Histogram.decodeFromCompressedByteBuffer(buffer, 0);
      if (copy.getTotalCount() != histogram.getTotalCount()) throw new AssertionError("decoded count");
    }
    System.out.println("mean: " + histogram.getMean() + ", p99: " + histogram.getValueAtPercentile(99.0)
        + ", compressed bytes: " + bytes);
  }
}
