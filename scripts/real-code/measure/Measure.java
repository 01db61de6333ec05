// Real-code benchmark: measure a driver under plain `java` — its main run REPS times in one JVM after
// WARM warm-up runs (its output silenced), then the median wall time, the main thread's CPU time (less disturbed by other
// processes on a shared machine) and the median bytes allocated by
// the thread per run (com.sun.management.ThreadMXBean: what the JIT's escape analysis removed is not
// counted, as it is not allocated).
//   java -cp overlay:classes:... Measure WARM REPS DriverClass args...
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.Arrays;

public class Measure {
  public static void main(String[] args) throws Throwable {
    int warm = Integer.parseInt(args[0]);
    int reps = Integer.parseInt(args[1]);
    Method main = Class.forName(args[2]).getMethod("main", String[].class);
    String[] rest = Arrays.copyOfRange(args, 3, args.length);
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    PrintStream out = System.out;
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    long[] ms = new long[reps];
    long[] bytes = new long[reps];
    long[] cpu = new long[reps];
    for (int i = 0; i < warm + reps; i++) {
      System.setOut(i == warm + reps - 1 ? out : quiet);
      long b0 = mx.getCurrentThreadAllocatedBytes();
      long c0 = mx.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      main.invoke(null, (Object) rest);
      long t1 = System.nanoTime();
      long c1 = mx.getCurrentThreadCpuTime();
      long b1 = mx.getCurrentThreadAllocatedBytes();
      if (i >= warm) { ms[i - warm] = (t1 - t0) / 1_000; bytes[i - warm] = b1 - b0; cpu[i - warm] = (c1 - c0) / 1_000; }
    }
    System.setOut(out);
    Arrays.sort(ms);
    Arrays.sort(bytes);
    Arrays.sort(cpu);
    System.out.printf("wall median %.1f ms (min %.1f), thread CPU median %.1f ms (min %.1f), allocated median %.2f MB, %d runs%n",
        ms[reps / 2] / 1000.0, ms[0] / 1000.0, cpu[reps / 2] / 1000.0, cpu[0] / 1000.0, bytes[reps / 2] / 1e6, reps);
  }
}
